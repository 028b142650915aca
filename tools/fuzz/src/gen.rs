//! The grammar-aware generator: mostly valid twill programs (spec Part I,
//! as docs/language.md describes the language built) made of host code —
//! bindings, functions and closures, `if`/`while`/`for`/`match`, Arr, Str,
//! Opt and Res values, Int edge values — and tensor code: every dtype,
//! hostile shapes (a zero next to a huge dimension, rank 0, broadcasts),
//! every operation of the registry called with often-right and
//! sometimes-wrong arguments, slices with extreme bounds, autodiff, NaN and
//! infinities, printing. Names and parameters of operations come from
//! `twill_tensor::ops::Op`, builtins and methods from the checker's tables,
//! so the generator follows the language as it grows.
//!
//! Wrong arguments are kept rare on purpose: a static error anywhere stops
//! the whole program at `check`, and a runtime error ends it, so most of a
//! program must be valid for its later statements to run at all.

use twill_check::builtins::{Builtin, HostFn, HostMethod};
use twill_tensor::ops::Op;

use crate::rng::Rng;

const DTYPES: &[&str] = &["bool", "i8", "i32", "bf16", "f16", "f32", "f64"];
const FLOAT_DTYPES: &[&str] = &["bf16", "f16", "f32", "f64"];

/// Ints at the edges of every width the language has, and around them.
const INT_EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "-3",
    "7",
    "63",
    "64",
    "127",
    "128",
    "-129",
    "255",
    "2147483647",
    "-2147483648",
    "4294967296",
    "9007199254740993",
    "4611686018427387904",
    "9223372036854775807",
    "-9223372036854775807",
    "(-9223372036854775807 - 1)",
];

const FLOAT_EDGES: &[&str] = &[
    "0.0",
    "-0.0",
    "0.5",
    "1.5",
    "-2.5",
    "0.1",
    "1e308",
    "-1e308",
    "1e-308",
    "5e-324",
    "nan",
    "inf",
    "-inf",
    "3.4028235e38",
    "65504.0",
    "65520.0",
    "1e-45",
    "6e-8",
    "pi",
    "9.223372036854776e18",
];

/// Dimensions that cannot be materialised, or only just.
const HUGE_DIMS: &[&str] = &[
    "9223372036854775807",
    "4611686018427387904",
    "2147483648",
    "4294967296",
];
const LARGE_DIMS: &[&str] = &["1000", "4096", "65536", "100000", "1000000"];

/// Slice bounds and steps: small, at ±2^63 and around it, and 0.
const SLICE_EDGES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "-2",
    "3",
    "5",
    "-7",
    "100",
    "4611686018427387904",
    "9223372036854775807",
    "-9223372036854775807",
    "(-9223372036854775807 - 1)",
];

const STRS: &[&str] = &[
    "\"\"",
    "\"a\"",
    "\"abc\"",
    "\"héllo\"",
    "\"\\u{1F600}x\"",
    "\"a,b,,c\"",
    "\"  pad  \"",
    "\"\\n\\t\\\\\"",
    "\"\\\"q\\\"\"",
    "\"ß\"",
    "\",\"",
    "\"42\"",
    "\"-9223372036854775808\"",
    "\"9223372036854775808\"",
    "\"1e400\"",
    "\"nan\"",
    "\" 3.5 \"",
];

const EINSUM_SPECS: &[&str] = &[
    "\"ij,jk->ik\"",
    "\"i,i->\"",
    "\"ii->i\"",
    "\"ij->ji\"",
    "\"...i,i->...\"",
    "\"bij,bjk->bik\"",
    "\"i,j->ij\"",
    "\"->\"",
    "\"ij\"",
    "\"i->ii\"",
    "\"a,b,c->abc\"",
    "\"i,i\"",
    "\"\"",
];

const INT_BINOPS: &[&str] = &["+", "-", "*", "//", "%", "**", "<<", ">>", "&", "|", "^"];
const FLOAT_BINOPS: &[&str] = &["+", "-", "*", "/", "//", "%", "**"];
const CMP: &[&str] = &["==", "!=", "<", "<=", ">", ">="];
const TENSOR_BINOPS: &[&str] = &["+", "-", "*", "/", "//", "%", "**", "@", "==", "<", ">=", "!="];

/// The files generated programs write (relative: in the runner's scratch
/// directory, which removes them before each program).
pub const SCRATCH_FILES: &[&str] = &["out.txt", "out.npy"];

/// The builtins a random call may name: everything but the file writers,
/// which get fixed relative paths of their own (the fuzzer runs as
/// whoever started it, possibly root), and `exit`, which would end most
/// programs early (the mutants of the goldens that call it exercise it).
fn callable_builtins() -> Vec<&'static str> {
    Builtin::all()
        .filter(|b| {
            !matches!(
                b,
                Builtin::Host(HostFn::WriteText)
                    | Builtin::Host(HostFn::SaveNpy)
                    | Builtin::Host(HostFn::Exit)
            )
        })
        .map(Builtin::name)
        .collect()
}

/// One generated program.
pub fn program(rng: &mut Rng) -> String {
    let mut g = Gen {
        rng,
        out: String::new(),
        indent: 0,
        fresh: 0,
        scope: Scope::default(),
        shape: Vec::new(),
        builtins: callable_builtins(),
        methods: HostMethod::all().map(HostMethod::name).collect(),
        has_struct: false,
    };
    g.program();
    g.out
}

/// The names in scope, by the kind of value they hold.
#[derive(Clone, Default)]
struct Scope {
    ints: Vec<String>,
    mut_ints: Vec<String>,
    floats: Vec<String>,
    strs: Vec<String>,
    mut_strs: Vec<String>,
    arrs: Vec<String>,
    mut_arrs: Vec<String>,
    tensors: Vec<String>,
    mut_tensors: Vec<String>,
    /// Functions of one Int giving an Int.
    fns: Vec<String>,
}

struct Gen<'r> {
    rng: &'r mut Rng,
    out: String,
    indent: usize,
    fresh: usize,
    scope: Scope,
    /// The program's usual shape, so that most tensors broadcast together
    /// and the program gets past its first elementwise operation.
    shape: Vec<String>,
    builtins: Vec<&'static str>,
    methods: Vec<&'static str>,
    has_struct: bool,
}

impl Gen<'_> {
    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn pick_name(&mut self, names: &[String]) -> String {
        names
            .get(self.rng.below(names.len()))
            .cloned()
            .unwrap_or_default()
    }

    fn name(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn program(&mut self) {
        let rank = self.rng.below(4);
        self.shape = (0..rank)
            .map(|_| {
                if self.rng.chance(8) {
                    "0".to_string()
                } else {
                    self.rng.range(1, 4).to_string()
                }
            })
            .collect();
        if self.rng.chance(20) {
            self.has_struct = true;
            self.line("struct P { x: F64, n: Int, s: Str }");
        }
        if self.rng.chance(30) {
            self.line("fn rec(n) { if n <= 0 { 0 } else { rec(n - 1) + 1 } }");
            self.scope.fns.push("rec".into());
        }
        let n = 3 + self.rng.below(12);
        for _ in 0..n {
            self.stmt(3);
        }
    }

    /// A block's statements, with the names they bind dropped after it.
    fn block(&mut self, depth: u32) {
        let saved = self.scope.clone();
        self.indent += 1;
        for _ in 0..1 + self.rng.below(3) {
            self.stmt(depth.saturating_sub(1));
        }
        self.indent -= 1;
        self.scope = saved;
    }

    fn stmt(&mut self, depth: u32) {
        let choice = self.rng.below(if depth == 0 { 4 } else { 16 });
        match choice {
            0 => self.decl(),
            1 => {
                let n = 1 + self.rng.below(3);
                let args: Vec<String> = (0..n).map(|_| self.any(2)).collect();
                self.line(&format!("print({})", args.join(", ")));
            }
            2 => self.mutate_var(),
            3 => {
                let t = self.tensor(3);
                self.line(&format!("print({t})"));
            }
            4 => {
                let c = self.boolean(2);
                self.line(&format!("if {c} {{"));
                self.block(depth);
                if self.rng.chance(50) {
                    self.line("} else {");
                    self.block(depth);
                }
                self.line("}");
            }
            5 => {
                let v = self.name("i");
                let (over, kind) = match self.rng.below(5) {
                    // At most four sub-tensors: a loop over a [2^31, 0]
                    // tensor runs 2^31 times, as it should.
                    0 => (format!("{}[:4]", self.tensor(1)), 0),
                    1 => (self.str_expr(1), 1),
                    2 => (self.arr(1), 2),
                    // Bounds that stay small: a loop over range(2, -2^63, -7)
                    // is a hang of the program's making, not of twill's.
                    _ => (format!("range({})", self.rng.range(-2, 5)), 3),
                };
                self.line(&format!("for {v} in {over} {{"));
                let saved = self.scope.clone();
                match kind {
                    0 => self.scope.tensors.push(v),
                    1 => self.scope.strs.push(v),
                    3 => self.scope.ints.push(v),
                    // An Arr's elements may be of any kind.
                    _ => {}
                }
                self.block(depth);
                self.scope = saved;
                self.line("}");
            }
            6 => {
                let w = self.name("w");
                let k = self.rng.range(0, 5);
                self.line(&format!("var {w} = 0"));
                self.line(&format!("while {w} < {k} {{"));
                self.indent += 1;
                self.line(&format!("{w} += 1"));
                if self.rng.chance(20) {
                    self.line(&format!("if {w} == 2 {{ continue }}"));
                }
                if self.rng.chance(20) {
                    self.line(&format!("if {w} == 3 {{ break }}"));
                }
                self.indent -= 1;
                self.block(depth);
                self.line("}");
            }
            7 => self.function(),
            8 => self.match_stmt(),
            9 | 10 => self.autodiff(),
            11 if self.rng.chance(50) => {
                let call = self.builtin_call(2);
                self.line(&format!("print({call})"));
            }
            12 => self.files(),
            13 => {
                let c = self.boolean(2);
                let msg = self.rng.pick(STRS);
                self.line(&format!("assert({c}, {msg})"));
            }
            14 => self.growth(),
            15 if self.rng.chance(50) => self.host_v2(),
            _ => {
                let e = self.op_call(3, None);
                self.line(&format!("print({e})"));
            }
        }
    }

    fn decl(&mut self) {
        let kw = if self.rng.chance(40) { "var" } else { "let" };
        let mutable = kw == "var";
        match self.rng.below(6) {
            0 => {
                let e = self.int(3);
                let n = self.name("n");
                self.line(&format!("{kw} {n} = {e}"));
                if mutable {
                    self.scope.mut_ints.push(n.clone());
                }
                self.scope.ints.push(n);
            }
            1 => {
                let e = self.float(3);
                let n = self.name("f");
                self.line(&format!("{kw} {n} = {e}"));
                self.scope.floats.push(n);
            }
            2 => {
                let e = self.str_expr(3);
                let n = self.name("s");
                self.line(&format!("{kw} {n} = {e}"));
                if mutable {
                    self.scope.mut_strs.push(n.clone());
                }
                self.scope.strs.push(n);
            }
            3 => {
                let e = self.arr(3);
                let n = self.name("a");
                self.line(&format!("{kw} {n} = {e}"));
                if mutable {
                    self.scope.mut_arrs.push(n.clone());
                }
                self.scope.arrs.push(n);
            }
            _ => {
                let e = self.tensor(3);
                let n = self.name("t");
                self.line(&format!("{kw} {n} = {e}"));
                if mutable {
                    self.scope.mut_tensors.push(n.clone());
                }
                self.scope.tensors.push(n);
            }
        }
    }

    fn mutate_var(&mut self) {
        match self.rng.below(4) {
            3 if !self.scope.mut_tensors.is_empty() => {
                // Assignment into a tensor (spec §11.2), any subscript.
                let v = self.pick_name(&self.scope.mut_tensors.clone());
                let op = self.rng.pick(&["=", "=", "+=", "-=", "*=", "/="]);
                let sub = self.subscript();
                let e = if self.rng.chance(40) {
                    self.any(1)
                } else {
                    self.tensor(2)
                };
                self.line(&format!("{v}[{sub}] {op} {e}"));
            }
            0 if !self.scope.mut_ints.is_empty() => {
                let v = self.pick_name(&self.scope.mut_ints.clone());
                let op = self.rng.pick(&["=", "+=", "-=", "*=", "/="]);
                let e = self.int(2);
                self.line(&format!("{v} {op} {e}"));
            }
            1 if !self.scope.mut_arrs.is_empty() => {
                let v = self.pick_name(&self.scope.mut_arrs.clone());
                let line = match self.rng.below(5) {
                    0 => format!("{v}.push({})", self.any(1)),
                    1 => format!("print({v}.pop())"),
                    2 => format!("{v}.insert({}, {})", self.slice_bound(), self.any(1)),
                    3 => format!("print({v}.remove({}))", self.slice_bound()),
                    _ => format!("{v}[{}] = {}", self.slice_bound(), self.any(1)),
                };
                self.line(&line);
            }
            2 if !self.scope.mut_strs.is_empty() => {
                let v = self.pick_name(&self.scope.mut_strs.clone());
                let e = self.str_expr(1);
                self.line(&format!("{v} += {e}"));
            }
            _ => self.decl(),
        }
    }

    fn function(&mut self) {
        let f = self.name("g");
        let saved = self.scope.clone();
        let body = {
            self.scope.ints.push("p".into());
            let b = self.int(3);
            self.scope = saved.clone();
            b
        };
        if self.rng.chance(25) {
            // Defaults and keywords (spec §10.5).
            let d = self.int(1);
            self.line(&format!("fn {f}(p, q = {d}) {{ {body} + q }}"));
            let (a, b) = (self.int(1), self.int(1));
            self.line(&format!("print({f}({a}), {f}({a}, q={b}), {f}(q={b}, p={a}))"));
        } else if self.rng.chance(50) {
            self.line(&format!("fn {f}(p) {{ {body} }}"));
        } else {
            let k = self.int(1);
            self.line(&format!("let {f} = fn(p) {{ {body} + {k} }}"));
        }
        self.scope.fns.push(f.clone());
        let arg = self.int(2);
        self.line(&format!("print({f}({arg}))"));
    }

    /// Tuples, destructuring, Dict items, tuple patterns and slice
    /// assignment (spec §10.1, §10.2, §10.7).
    fn host_v2(&mut self) {
        match self.rng.below(4) {
            0 => {
                let (a, b) = (self.name("t"), self.name("t"));
                let (x, y) = (self.any(1), self.any(1));
                let kw = if self.rng.chance(50) { "var" } else { "let" };
                self.line(&format!("{kw} ({a}, {b}) = ({x}, {y})"));
                self.line(&format!("print({a}, {b}, ({a}, {b}), ({a},), ({a}, ({b},)).1.0)"));
            }
            1 => {
                let (k, v) = (self.name("k"), self.name("v"));
                let (x, y) = (self.int(1), self.any(1));
                self.line(&format!("for ({k}, {v}) in [\"x\": {x}, \"y\": {y}].items() {{"));
                self.indent += 1;
                self.line(&format!("print({k}, {v})"));
                self.indent -= 1;
                self.line("}");
            }
            2 => {
                let (x, y) = (self.int(1), self.str_expr(1));
                self.line(&format!("match ({x}, {y}) {{"));
                self.indent += 1;
                self.line("(0, s) => print(\"zero\", s),");
                self.line("(n, _) => print(n),");
                self.indent -= 1;
                self.line("}");
            }
            _ => {
                let a = self.name("s");
                let (lo, hi) = (self.slice_bound(), self.slice_bound());
                let (x, y) = (self.int(1), self.int(1));
                self.line(&format!("var {a}: Arr[Int] = [1, 2, 3, 4]"));
                self.line(&format!("{a}[{lo}:{hi}] = [{x}, {y}]"));
                self.line(&format!("print({a}, min({a}), sum({a}))"));
            }
        }
    }

    fn match_stmt(&mut self) {
        let (scrut, pats): (String, Vec<String>) = match self.rng.below(4) {
            0 => (
                self.int(2),
                vec![self.rng.pick(INT_EDGES).to_string(), "-1".into(), "0".into()],
            ),
            1 => (
                self.str_expr(2),
                vec![self.rng.pick(STRS).to_string(), "\"a\"".into()],
            ),
            2 => (
                self.opt(2),
                vec!["Some(v)".into(), "None".into(), "Some(0)".into()],
            ),
            _ => (
                self.res(2),
                vec!["Ok(v)".into(), "Err(e)".into(), "Ok(\"\")".into()],
            ),
        };
        self.line(&format!("match {scrut} {{"));
        self.indent += 1;
        for p in pats {
            if self.rng.chance(80) {
                let body = self.any(1);
                self.line(&format!("{p} => print({body}),"));
            }
        }
        if self.rng.chance(80) {
            self.line("_ => print(\"other\"),");
        }
        self.indent -= 1;
        self.line("}");
    }

    /// A file written to a relative path (the runner's scratch directory)
    /// and read back.
    fn files(&mut self) {
        match self.rng.below(3) {
            0 => {
                let s = self.str_expr(2);
                self.line(&format!("write_text(\"out.txt\", {s})"));
                let r = self.rng.pick(&["read_text", "read_csv"]);
                self.line(&format!("print({r}(\"out.txt\"))"));
            }
            1 => {
                let t = self.tensor(2);
                self.line(&format!("save_npy(\"out.npy\", {t})"));
                self.line("print(load_npy(\"out.npy\"))");
            }
            _ => {
                let r = self.rng.pick(&["read_text", "read_csv", "load_npy"]);
                let s = self.str_expr(1);
                self.line(&format!("print({r}({s}))"));
            }
        }
    }

    /// Values that grow: a Str or Arr doubled, deep recursion.
    fn growth(&mut self) {
        // Mostly sizes that fit; now and then past any memory.
        let k = if self.rng.chance(85) {
            self.rng.range(1, 20)
        } else {
            self.rng.range(20, 40)
        };
        match self.rng.below(3) {
            0 => {
                let v = self.name("s");
                let s = self.rng.pick(STRS);
                self.line(&format!("var {v} = {s}"));
                self.line(&format!("for _ in range({k}) {{ {v} += {v} }}"));
                self.line(&format!("print(len({v}))"));
            }
            1 => {
                let v = self.name("a");
                self.line(&format!("var {v} = [1]"));
                self.line(&format!("for _ in range({k}) {{ {v} = {v} + {v} }}"));
                self.line(&format!("print({v}.len())"));
            }
            _ => {
                let depth = self.rng.pick(&["10", "1000", "100000", "300000"]);
                self.line("fn deep(n) { if n <= 0 { 0 } else { deep(n - 1) + 1 } }");
                self.line(&format!("print(deep({depth}))"));
            }
        }
    }

    fn autodiff(&mut self) {
        let x = self.diff_input();
        let body = self.diff_body("x");
        let f = format!("fn(x) {{ {body} }}");
        let e = match self.rng.below(8) {
            0 => format!("grad({f}, {x})"),
            1 => format!("value_and_grad({f}, {x})"),
            2 => format!("jvp({f}, {x}, {})", self.diff_input()),
            3 => format!("vjp({f}, {x}, {})", self.diff_input()),
            4 => format!("jacobian({f}, {x})"),
            5 => format!("hessian({f}, {x})"),
            6 => format!(
                "grad(fn(ps) {{ (ps[0] * ps[1]).sum() }}, [{x}, {}])",
                self.diff_input()
            ),
            _ => {
                let tb = self.name("tp");
                let body = self.diff_body("w");
                let seed = if self.rng.chance(50) {
                    self.float(0)
                } else {
                    self.diff_input()
                };
                self.line(&format!("fn {tb}() -> Res[Arr[Tensor], Str] {{"));
                self.indent += 1;
                self.line("let tp = tape()");
                self.line(&format!("let w = tp.watch({x})"));
                if self.rng.chance(10) {
                    self.line("let w2 = tp.watch(w)");
                }
                self.line(&format!("backward(tp, {body}, {seed})"));
                self.indent -= 1;
                self.line("}");
                format!("{tb}()")
            }
        };
        self.line(&format!("print({e})"));
    }

    /// A float tensor of the program's shape, now and then not float.
    fn diff_input(&mut self) -> String {
        let shape = self.base_shape();
        let dt = if self.rng.chance(90) {
            self.rng.pick(FLOAT_DTYPES)
        } else {
            self.rng.pick(DTYPES)
        };
        match self.rng.below(3) {
            0 => format!("rand({shape}, {dt}, seed={})", self.rng.below(5)),
            1 => format!("randn({shape}, {dt})"),
            _ => format!("full({shape}, {}, {dt})", self.rng.pick(FLOAT_EDGES)),
        }
    }

    /// The body of a function differentiated at `x`: some operation on it,
    /// mostly summed to one element.
    fn diff_body(&mut self, x: &str) -> String {
        let inner = match self.rng.below(4) {
            0 => format!("{x} * {x}"),
            1 => format!(
                "({x} {} {})",
                self.rng.pick(&["+", "-", "*", "/", "**"]),
                self.float(0)
            ),
            _ => self.op_call(1, Some(x.to_string())),
        };
        match self.rng.below(10) {
            0 => inner,
            1 => format!("({inner}).mean()"),
            _ => format!("({inner}).sum()"),
        }
    }

    // ---- expressions -------------------------------------------------

    fn any(&mut self, d: u32) -> String {
        match self.rng.below(8) {
            0 => self.int(d),
            1 => self.float(d),
            2 => self.str_expr(d),
            3 => self.arr(d),
            4 => self.boolean(d),
            5 => self.opt(d),
            6 if self.has_struct => format!(
                "P {{ x: {}, n: {}, s: {} }}",
                self.float(0),
                self.int(0),
                self.str_expr(0)
            ),
            _ => self.tensor(d),
        }
    }

    fn var_or(&mut self, names: &[String], fallback: impl FnOnce(&mut Self) -> String) -> String {
        if !names.is_empty() && self.rng.chance(70) {
            self.pick_name(names)
        } else {
            fallback(self)
        }
    }

    fn int(&mut self, d: u32) -> String {
        let n = if d == 0 { 3 } else { 12 };
        match self.rng.below(n) {
            0 => self.rng.pick(INT_EDGES).to_string(),
            1 => {
                let names = self.scope.ints.clone();
                self.var_or(&names, |g| g.rng.range(-3, 9).to_string())
            }
            2 => self.rng.range(-5, 20).to_string(),
            3 | 4 => {
                let op = self.rng.pick(INT_BINOPS);
                format!("({} {op} {})", self.int(d - 1), self.int(d - 1))
            }
            5 => match self.rng.below(4) {
                0 => format!("len({})", self.str_expr(d - 1)),
                1 => format!("len({})", self.arr(d - 1)),
                2 => format!("len(range({}))", self.small_range()),
                _ => format!("len({})", self.tensor(d - 1)),
            },
            6 if !self.scope.fns.is_empty() => {
                let f = self.pick_name(&self.scope.fns.clone());
                format!("{f}({})", self.int(d - 1))
            }
            7 => match self.rng.below(3) {
                0 => format!("int({})", self.float(d - 1)),
                1 => format!("int({})", self.rng.pick(STRS)),
                _ => format!("int({})", self.boolean(d - 1)),
            },
            8 => match self.rng.below(3) {
                0 => format!("{}.ndim", self.tensor(d - 1)),
                1 => format!("{}.numel()", self.tensor(d - 1)),
                _ => format!("{}.find({})", self.str_expr(d - 1), self.str_expr(d - 1)),
            },
            9 if self.rng.chance(15) => {
                let m = self.rng.pick(&["underflows", "overflows"]);
                format!("{}.{m}({})", self.format_expr(), self.tensor(d - 1))
            }
            9 => match self.rng.below(3) {
                0 => format!("abs({})", self.int(d - 1)),
                1 => format!("-{}", self.int(d - 1)),
                _ => format!("f64_bits({})", self.float(d - 1)),
            },
            10 => format!(
                "(if {} {{ {} }} else {{ {} }})",
                self.boolean(d - 1),
                self.int(d - 1),
                self.int(d - 1)
            ),
            _ => format!("{}.item()", self.int_tensor()),
        }
    }

    fn float(&mut self, d: u32) -> String {
        let n = if d == 0 { 3 } else { 9 };
        match self.rng.below(n) {
            0 | 1 => self.rng.pick(FLOAT_EDGES).to_string(),
            2 => {
                let names = self.scope.floats.clone();
                self.var_or(&names, |g| format!("{}.{}", g.rng.range(-9, 9), g.rng.below(10)))
            }
            3 => format!("({} / {})", self.int(d - 1), self.int(d - 1)),
            4 => {
                let op = self.rng.pick(FLOAT_BINOPS);
                format!("({} {op} {})", self.float(d - 1), self.float(d - 1))
            }
            5 => {
                let f = self.rng.pick(&[
                    "sqrt", "exp", "log", "sin", "tanh", "sigmoid", "floor", "round", "rsqrt", "expm1",
                    "log1p", "float",
                ]);
                format!("{f}({})", self.float(d - 1))
            }
            6 => format!(
                "{}({}, {})",
                self.rng.pick(&["maximum", "minimum"]),
                self.float(d - 1),
                self.float(d - 1)
            ),
            7 => format!("f64_from_bits({})", self.int(d - 1)),
            8 if self.rng.chance(20) => {
                let field = self
                    .rng
                    .pick(&["max", "min_normal", "min_subnormal", "eps", "underflow_cliff"]);
                format!("{}.{field}", self.format_expr())
            }
            _ => format!("{}.sum().to(f64).item()", self.tensor(d - 1)),
        }
    }

    fn boolean(&mut self, d: u32) -> String {
        let n = if d == 0 { 2 } else { 8 };
        match self.rng.below(n) {
            0 => self.rng.pick(&["true", "false"]).to_string(),
            1 => format!(
                "({} {} {})",
                self.rng.range(-2, 2),
                self.rng.pick(CMP),
                self.rng.range(-2, 2)
            ),
            2 => format!("({} {} {})", self.int(d - 1), self.rng.pick(CMP), self.int(d - 1)),
            3 => format!(
                "({} {} {})",
                self.float(d - 1),
                self.rng.pick(CMP),
                self.float(d - 1)
            ),
            4 => format!("not {}", self.boolean(d - 1)),
            5 => format!(
                "({} {} {})",
                self.boolean(d - 1),
                self.rng.pick(&["and", "or", "&", "|", "^"]),
                self.boolean(d - 1)
            ),
            6 => format!("isnan({})", self.float(d - 1)),
            _ => format!(
                "{}.{}({})",
                self.str_expr(d - 1),
                self.rng.pick(&["contains", "starts_with", "ends_with"]),
                self.str_expr(d - 1)
            ),
        }
    }

    fn str_expr(&mut self, d: u32) -> String {
        let n = if d == 0 { 2 } else { 9 };
        match self.rng.below(n) {
            0 => self.rng.pick(STRS).to_string(),
            1 => {
                let names = self.scope.strs.clone();
                self.var_or(&names, |g| g.rng.pick(STRS).to_string())
            }
            2 => format!("({} + {})", self.str_expr(d - 1), self.str_expr(d - 1)),
            3 => format!(
                "{}.{}()",
                self.str_expr(d - 1),
                self.rng.pick(&["upper", "lower", "trim"])
            ),
            4 => format!("{}[{}]", self.str_expr(d - 1), self.slice()),
            5 => format!("str({})", self.any(d - 1)),
            6 => format!(
                "{}.replace({}, {})",
                self.str_expr(d - 1),
                self.str_expr(d - 1),
                self.str_expr(d - 1)
            ),
            7 => format!("{}.join({})", self.arr(d - 1), self.str_expr(d - 1)),
            _ => format!("{}[{}]", self.str_expr(d - 1), self.slice_bound()),
        }
    }

    fn arr(&mut self, d: u32) -> String {
        let n = if d == 0 { 2 } else { 8 };
        match self.rng.below(n) {
            0 => {
                let k = self.rng.below(4);
                let items: Vec<String> = (0..k).map(|_| self.rng.pick(STRS).to_string()).collect();
                format!("[{}]", items.join(", "))
            }
            1 => {
                let names = self.scope.arrs.clone();
                self.var_or(&names, |g| format!("arr(range({}))", g.small_range()))
            }
            2 => format!("arr(range({}))", self.small_range()),
            3 => format!("({} + {})", self.arr(d - 1), self.arr(d - 1)),
            4 => format!("{}.reversed()", self.arr(d - 1)),
            5 => format!("{}[{}]", self.arr(d - 1), self.slice()),
            6 => format!("{}.split({})", self.str_expr(d - 1), self.str_expr(d - 1)),
            _ => format!("arr({})", self.str_expr(d - 1)),
        }
    }

    fn opt(&mut self, d: u32) -> String {
        match self.rng.below(3) {
            0 => "None".into(),
            1 => format!("Some({})", self.any(d.saturating_sub(1))),
            _ => self.res(d),
        }
    }

    fn res(&mut self, d: u32) -> String {
        if self.rng.chance(50) {
            format!("Ok({})", self.any(d.saturating_sub(1)))
        } else {
            format!("Err({})", self.str_expr(d.saturating_sub(1)))
        }
    }

    /// `a`, `a, b` or `a, b, step` for `range`, edges included.
    fn small_range(&mut self) -> String {
        match self.rng.below(6) {
            0 => format!("{}", self.rng.range(-2, 6)),
            1 => format!("{}, {}", self.rng.range(-3, 3), self.rng.range(-3, 6)),
            2 => format!(
                "{}, {}, {}",
                self.rng.range(-3, 3),
                self.rng.range(-3, 6),
                self.rng.range(-2, 3)
            ),
            3 => format!(
                "{}, {}, {}",
                self.rng.pick(SLICE_EDGES),
                self.rng.pick(SLICE_EDGES),
                self.rng.pick(SLICE_EDGES)
            ),
            _ => format!("{}", self.rng.range(0, 4)),
        }
    }

    fn slice_bound(&mut self) -> String {
        if self.rng.chance(70) {
            self.rng.range(-3, 3).to_string()
        } else {
            self.rng.pick(SLICE_EDGES).to_string()
        }
    }

    /// The items of one tensor subscript (spec §11.1): Ints, slices,
    /// `None`, `...`, integer lists and tensors, masks.
    fn subscript(&mut self) -> String {
        let k = 1 + self.rng.below(3);
        let parts: Vec<String> = (0..k)
            .map(|_| match self.rng.below(10) {
                0..=2 => self.slice_bound(),
                3..=5 => self.slice(),
                6 => "None".to_string(),
                7 => "...".to_string(),
                8 => {
                    let n = self.rng.below(4);
                    let items: Vec<String> = (0..n).map(|_| self.slice_bound()).collect();
                    format!("[{}]", items.join(", "))
                }
                _ => format!("{} > 0", self.tensor(1)),
            })
            .collect();
        parts.join(", ")
    }

    /// One slice `a:b:c` with any part left out.
    fn slice(&mut self) -> String {
        let part = |g: &mut Self| {
            if g.rng.chance(40) {
                String::new()
            } else {
                g.slice_bound()
            }
        };
        let a = part(self);
        let b = part(self);
        if self.rng.chance(50) {
            let c = part(self);
            format!("{a}:{b}:{c}")
        } else {
            format!("{a}:{b}")
        }
    }

    // ---- tensors -----------------------------------------------------

    fn dims(&mut self) -> Vec<String> {
        match self.rng.below(20) {
            0..=12 => self.shape.clone(),
            13 | 14 => (0..self.rng.below(5))
                .map(|_| self.rng.range(0, 4).to_string())
                .collect(),
            15 | 16 => {
                // A zero beside huge dimensions: no memory is needed.
                let mut v: Vec<String> = (0..1 + self.rng.below(3))
                    .map(|_| self.rng.pick(HUGE_DIMS).to_string())
                    .collect();
                let at = self.rng.below(v.len() + 1);
                v.insert(at, "0".into());
                v
            }
            17 => vec![
                self.rng.range(-3, 2).to_string(),
                self.rng.range(-1, 3).to_string(),
            ],
            18 => {
                let r = 1 + self.rng.below(2);
                (0..r).map(|_| self.rng.pick(LARGE_DIMS).to_string()).collect()
            }
            _ => vec![self.rng.pick(HUGE_DIMS).to_string()],
        }
    }

    fn base_shape(&mut self) -> String {
        format!("[{}]", self.shape.join(", "))
    }

    /// A shape argument: mostly a list literal, sometimes an Int or a
    /// tensor.
    fn shape_arg(&mut self) -> String {
        let dims = self.dims();
        match self.rng.below(10) {
            0 if dims.len() == 1 => dims.join(""),
            1 => format!("tensor([{}], i32)", dims.join(", ")),
            _ => format!("[{}]", dims.join(", ")),
        }
    }

    fn dtype(&mut self) -> &'static str {
        self.rng.pick(DTYPES)
    }

    fn int_tensor(&mut self) -> String {
        let shape = self.base_shape();
        let dt = self.rng.pick(&["i8", "i32"]);
        format!("ones({shape}, {dt}).sum()")
    }

    /// A list literal of numbers or Bools, nested to the program's shape
    /// now and then ragged.
    fn literal(&mut self) -> String {
        let dims: Vec<usize> = self
            .shape
            .iter()
            .map(|d| d.parse::<usize>().unwrap_or(1).min(4))
            .collect();
        let bools = self.rng.chance(15);
        self.literal_at(&dims, bools)
    }

    fn literal_at(&mut self, dims: &[usize], bools: bool) -> String {
        match dims.split_first() {
            None => {
                if bools {
                    self.rng.pick(&["true", "false"]).to_string()
                } else if self.rng.chance(70) {
                    self.rng.range(-4, 9).to_string()
                } else if self.rng.chance(50) {
                    self.rng.pick(FLOAT_EDGES).to_string()
                } else {
                    self.rng.pick(INT_EDGES).to_string()
                }
            }
            Some((&n, rest)) => {
                let n = if self.rng.chance(3) { n + 1 } else { n };
                let items: Vec<String> = (0..n).map(|_| self.literal_at(rest, bools)).collect();
                format!("[{}]", items.join(", "))
            }
        }
    }

    fn constructor(&mut self) -> String {
        let dt = self.dtype();
        let by_kw = self.rng.chance(30);
        let dt_arg = if by_kw { format!("dt={dt}") } else { dt.to_string() };
        match self.rng.below(12) {
            0 | 1 => format!(
                "{}({}, {dt_arg})",
                self.rng.pick(&["zeros", "ones"]),
                self.shape_arg()
            ),
            2 => {
                let v = if self.rng.chance(50) {
                    self.rng.pick(FLOAT_EDGES).to_string()
                } else {
                    self.rng.pick(INT_EDGES).to_string()
                };
                format!("full({}, {v}, {dt_arg})", self.shape_arg())
            }
            3 => format!(
                "arange({}, {dt})",
                self.rng.pick(&["0", "1", "5", "6", "-1", "12"])
            ),
            4 => format!(
                "arange({}, {}, step={}, dt={dt})",
                self.slice_bound(),
                self.slice_bound(),
                self.rng.pick(&["1", "2", "0.5", "-1", "0", "1e-300", "0.1"])
            ),
            5 => format!(
                "linspace({}, {}, {}, {dt_arg})",
                self.float(0),
                self.float(0),
                self.rng.pick(&["0", "1", "2", "5", "-1", "100"])
            ),
            6 => format!("eye({}, {dt_arg})", self.rng.pick(&["0", "1", "3", "-1"])),
            7 => format!(
                "{}({}, {dt_arg}, seed={})",
                self.rng.pick(&["rand", "randn"]),
                self.shape_arg(),
                self.rng.pick(INT_EDGES)
            ),
            8 => {
                let lit = self.literal();
                format!("tensor({lit}, {dt_arg})")
            }
            9 => format!(
                "{}({})",
                self.rng.pick(&["zeros_like", "ones_like"]),
                self.tensor(0)
            ),
            10 => format!("tensor({}, {dt_arg})", self.float(0)),
            _ => self.literal(),
        }
    }

    fn tensor(&mut self, d: u32) -> String {
        let n = if d == 0 { 2 } else { 10 };
        match self.rng.below(n) {
            0 => self.constructor(),
            1 => {
                let names = self.scope.tensors.clone();
                self.var_or(&names, Self::constructor)
            }
            2 | 3 => self.op_call(d - 1, None),
            4 => {
                let op = self.rng.pick(TENSOR_BINOPS);
                let b = if self.rng.chance(30) {
                    self.float(0)
                } else {
                    self.tensor(d - 1)
                };
                format!("({} {op} {b})", self.tensor(d - 1))
            }
            5 => match self.rng.below(6) {
                0 => format!("(-{})", self.tensor(d - 1)),
                1 => format!("{}.T", self.tensor(d - 1)),
                4 => format!("{}.encode({})", self.format_expr(), self.tensor(d - 1)),
                5 => {
                    let f = self.format_expr();
                    format!("{f}.decode({f}.encode({}))", self.tensor(d - 1))
                }
                _ => format!("{}.to({})", self.tensor(d - 1), self.dtype()),
            },
            6 => {
                let sub = self.subscript();
                format!("{}[{}]", self.tensor(d - 1), sub)
            }
            7 => format!("{}.broadcast_to({})", self.tensor(d - 1), self.shape_arg()),
            8 => format!("grad(fn(x) {{ {} }}, {})", self.diff_body("x"), self.diff_input()),
            _ => self.constructor(),
        }
    }

    /// An argument for the operation parameter `name`, chosen by what the
    /// parameter means.
    fn arg_for(&mut self, name: &str, d: u32) -> String {
        match name {
            "x" | "a" | "b" | "w" => self.tensor(d),
            "cond" => format!("({} > 0)", self.tensor(d)),
            "axis" | "a_axis" => self.axis(),
            "keepdim" | "descending" => self.rng.pick(&["true", "false"]).to_string(),
            "ddof" | "k" | "shift" => {
                if self.rng.chance(70) {
                    self.rng.range(-1, 4).to_string()
                } else {
                    self.rng.pick(INT_EDGES).to_string()
                }
            }
            "shape" => self.shape_arg(),
            "axes" => {
                let r = self.shape.len();
                let mut v: Vec<String> = (0..r).map(|i| i.to_string()).collect();
                if self.rng.chance(50) {
                    v.reverse();
                }
                if self.rng.chance(15) {
                    v.push(self.axis());
                }
                format!("[{}]", v.join(", "))
            }
            "lo" | "hi" => self.float(0),
            "arr" => {
                let k = self.rng.below(4);
                let parts: Vec<String> = (0..k).map(|_| self.tensor(d)).collect();
                format!("[{}]", parts.join(", "))
            }
            "sizes" => {
                if self.rng.chance(50) {
                    self.slice_bound()
                } else {
                    let k = self.rng.below(4);
                    let v: Vec<String> = (0..k).map(|_| self.rng.range(-1, 3).to_string()).collect();
                    format!("[{}]", v.join(", "))
                }
            }
            "idx" => match self.rng.below(5) {
                0 => format!("arange({}, i32)", self.rng.range(0, 4)),
                1 => format!(
                    "tensor([{}, {}], {})",
                    self.slice_bound(),
                    self.slice_bound(),
                    self.rng.pick(&["i32", "i8"])
                ),
                2 => format!("zeros({}, i8)", self.shape_arg()),
                3 => format!("zeros({}, i32)", self.base_shape()),
                _ => self.tensor(d),
            },
            "spec" => self.rng.pick(EINSUM_SPECS).to_string(),
            "acc" | "fmt" => self.format_expr(),
            "stride" | "padding" => match self.rng.below(4) {
                0 => format!("[{}, {}]", self.rng.range(0, 2), self.rng.range(0, 2)),
                1 => self.rng.pick(INT_EDGES).to_string(),
                _ => self.rng.range(0, 2).to_string(),
            },
            _ => self.any(d),
        }
    }

    /// A formats-lab Format (spec §13): mostly valid widths, biases and
    /// special schemes, sometimes edge or invalid ones.
    fn format_expr(&mut self) -> String {
        let (e, m) = if self.rng.chance(80) {
            (self.rng.range(1, 11), self.rng.range(0, 52))
        } else {
            (
                self.rng.pick(INT_EDGES).to_string().parse().unwrap_or(0),
                self.rng.range(-1, 60),
            )
        };
        let mut call = format!("float_format({e}, {m}");
        if self.rng.chance(40) {
            let bias = if self.rng.chance(80) {
                self.rng.range(-40, 1100).to_string()
            } else {
                self.rng.pick(INT_EDGES).to_string()
            };
            call.push_str(&format!(", bias={bias}"));
        }
        if self.rng.chance(30) {
            call.push_str(&format!(", subnormals={}", self.rng.pick(&["true", "false"])));
        }
        if self.rng.chance(50) {
            call.push_str(&format!(
                ", special={}",
                self.rng.pick(&["\"ieee\"", "\"fn\"", "\"none\"", "\"x\""])
            ));
        }
        call.push(')');
        call
    }

    fn axis(&mut self) -> String {
        if self.rng.chance(85) {
            self.rng.range(-3, 3).to_string()
        } else {
            self.rng.pick(INT_EDGES).to_string()
        }
    }

    /// A call of a random operation of the registry; `recv`, if given, is
    /// its first tensor argument.
    fn op_call(&mut self, d: u32, recv: Option<String>) -> String {
        let Some(op) = Op::ALL.get(self.rng.below(Op::ALL.len())) else {
            return self.constructor();
        };
        let spec = op.spec();
        let mut pos: Vec<String> = Vec::new();
        let mut kw: Vec<String> = Vec::new();
        let mut recv = recv;
        for p in spec.params {
            if !p.required && self.rng.chance(50) {
                continue;
            }
            let is_tensor = matches!(p.name, "x" | "a" | "w" | "arr" | "cond");
            let v = match recv.take() {
                Some(r) if is_tensor && p.name != "arr" && p.name != "cond" => r,
                other => {
                    recv = other;
                    self.arg_for(p.name, d)
                }
            };
            if !kw.is_empty() || (!p.required && self.rng.chance(50)) || self.rng.chance(5) {
                kw.push(format!("{}={v}", p.name));
            } else {
                pos.push(v);
            }
        }
        if spec.variadic && kw.is_empty() {
            for _ in 0..self.rng.below(3) {
                pos.push(self.tensor(d));
            }
        }
        if self.rng.chance(4) {
            // Sometimes wrong: an argument left out, one too many, an
            // unknown or repeated keyword, a value of the wrong kind.
            match self.rng.below(5) {
                0 if !pos.is_empty() => {
                    let i = self.rng.below(pos.len());
                    pos.remove(i);
                }
                1 => pos.push(self.any(0)),
                2 => kw.push(format!("nope={}", self.int(0))),
                3 if !kw.is_empty() => {
                    let k = kw[0].clone();
                    kw.push(k);
                }
                _ => {
                    if let Some(p) = pos.last_mut() {
                        *p = self.rng.pick(STRS).to_string();
                    }
                }
            }
        }
        if !pos.is_empty()
            && self.rng.chance(40)
            && spec
                .params
                .first()
                .is_some_and(|p| p.name != "spec" && p.name != "arr")
        {
            let first = pos.remove(0);
            let rest: Vec<String> = pos.into_iter().chain(kw).collect();
            format!("({first}).{}({})", spec.name, rest.join(", "))
        } else {
            let all: Vec<String> = pos.into_iter().chain(kw).collect();
            format!("{}({})", spec.name, all.join(", "))
        }
    }

    /// A call of any builtin or method by name with arguments of random
    /// kinds: mostly wrong, which the checker or the runtime must report.
    fn builtin_call(&mut self, d: u32) -> String {
        let k = self.rng.below(4);
        let args: Vec<String> = (0..k).map(|_| self.any(d.saturating_sub(1))).collect();
        if self.rng.chance(70) {
            let b = self.rng.pick(&self.builtins.clone());
            format!("{b}({})", args.join(", "))
        } else {
            let m = self.rng.pick(&self.methods.clone());
            let recv = self.any(d.saturating_sub(1));
            format!("({recv}).{m}({})", args.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_deterministic_and_varied() {
        let a = program(&mut Rng::for_program(1, 0));
        let b = program(&mut Rng::for_program(1, 0));
        let c = program(&mut Rng::for_program(1, 1));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    /// Over many programs every operation of the registry is called.
    #[test]
    fn every_operation_is_generated() {
        let mut text = String::new();
        for n in 0..400 {
            text.push_str(&program(&mut Rng::for_program(3, n)));
        }
        for op in Op::ALL {
            assert!(
                text.contains(&format!("{}(", op.name())),
                "`{op}` never generated"
            );
        }
        for dt in DTYPES {
            assert!(text.contains(dt), "dtype {dt} never generated");
        }
        for f in [
            "grad(",
            "value_and_grad(",
            "jvp(",
            "vjp(",
            "jacobian(",
            "backward(",
        ] {
            assert!(text.contains(f), "{f} never generated");
        }
    }
}
