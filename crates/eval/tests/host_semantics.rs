//! End-to-end checks of host-value semantics through the public pipeline
//! (parse, check, run): closures capture local variables by value, and
//! the NaN and signed-zero rules of `maximum`/`minimum`/`clip`.

// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::run;

#[test]
fn closures_capture_locals_by_value() {
    assert_eq!(
        run("fn t() {\n var x = 1\n let f = fn() { x }\n x = 2\n print(f(), x)\n}\nt()"),
        Ok("1 2\n".into())
    );
    assert_eq!(
        run("{\n var x = [\"a\"]\n let f = fn() { x }\n x.push(\"b\")\n print(f(), x)\n}"),
        Ok("[\"a\"] [\"a\", \"b\"]\n".into())
    );
    let e = run("fn t() {\n var c = 0\n let f = fn() { c += 1 }\n f()\n}").unwrap_err();
    assert!(e.contains("captured"), "{e}");
}

#[test]
fn maximum_minimum_clip_nan_and_zero() {
    assert_eq!(
        run("print(maximum(nan, 1), minimum(1, nan), clip(0.5, nan, 1.0), clip(0.5, 0.0, nan))"),
        Ok("nan nan nan nan\n".into())
    );
    assert_eq!(
        run("print(maximum(-0.0, 0.0), maximum(0.0, -0.0), minimum(0.0, -0.0), minimum(-0.0, 0.0))"),
        Ok("0 0 -0 -0\n".into())
    );
    assert_eq!(
        run("print(clip(5, 3, 1), clip(nan, 0, 1), clip(-2, -1, 1))"),
        Ok("1 nan -1\n".into())
    );
}

#[test]
fn int_conversion_covers_the_whole_range() {
    assert_eq!(
        run("print(int(-9223372036854775808.0))"),
        Ok("-9223372036854775808\n".into())
    );
    assert!(run("print(int(9223372036854775808.0))").is_err());
    assert!(run("print(int(nan))").is_err());
}

#[test]
fn match_failure_quotes_a_string_value() {
    let e = run("match \"a\\n\" { \"b\" => 1 }").unwrap_err();
    assert_eq!(e, "no `match` arm matches the value \"a\\n\"");
}
#[test]
fn top_level_closures_capture_by_value() {
    assert_eq!(
        run("var x = 1\nlet f = fn() { x }\nx = 2\nprint(f(), x)"),
        Ok("1 2\n".into())
    );
    // A later `let` of the same name does not change what the closure saw.
    assert_eq!(
        run("let y = 1\nlet f = fn() { y }\nlet y = 2\nprint(f(), y)"),
        Ok("1 2\n".into())
    );
    // Closures made inside a named function capture the current value.
    assert_eq!(
        run("fn make() { fn() { x } }\nvar x = 1\nlet f = make()\nx = 2\nprint(f(), make()())"),
        Ok("1 2\n".into())
    );
}

#[test]
fn named_functions_read_globals_when_they_run() {
    assert_eq!(
        run("var n = 0\nfn bump() { n += 1 }\nbump()\nbump()\nprint(n)"),
        Ok("2\n".into())
    );
    // A closure may recurse through the global it is being bound to.
    assert_eq!(
        run("let h = fn(k) { if k == 0 { 0 } else { 1 + h(k - 1) } }\nprint(h(5))"),
        Ok("5\n".into())
    );
}

#[test]
fn assigning_a_captured_top_level_variable_is_a_static_error() {
    let e = run("var c = 0\nlet f = fn() { c += 1 }\nf()").unwrap_err();
    assert!(e.contains("captured"), "{e}");
}
