//! Figures and `display` on evaluated values (spec §12.3, §12.4): `figure()`,
//! a figure's methods with their keyword arguments, the conversion of
//! tensors and Arrs to the numbers twill-plot draws, and the forms a value
//! is shown in by `display` and by a notebook's cell results (its text, a
//! figure's PNG and SVG, a small tensor's HTML table).

use std::cell::RefCell;
use std::fmt::Write;
use std::rc::Rc;

use twill_check::builtins::{FigureMethod, HostMethod};
use twill_host::Display;
use twill_plot::{Figure, FileFormat, Image};
use twill_syntax::Span;
use twill_tensor::{DType, Tensor};

use crate::error::{fail, Cx, R};
use crate::print::display;
use crate::value::Value;

/// The largest tensor shown as an HTML table (spec §12.4).
const HTML_MAX_ELEMENTS: usize = 1000;

/// `figure(width=640, height=480)`, from its argument slots.
pub(crate) fn new(slots: Vec<Option<Value>>, span: Span) -> R<Value> {
    let mut slots = slots.into_iter();
    let width = int_arg(slots.next().flatten(), "figure", "width", 640, span)?;
    let height = int_arg(slots.next().flatten(), "figure", "height", 480, span)?;
    match Figure::new(width, height) {
        Ok(f) => Ok(Value::Figure(Rc::new(RefCell::new(f)))),
        Err(m) => fail(span, format!("`figure`: {m}")),
    }
}

/// A figure's method `h` on its argument slots (slot 0 is the receiver's).
pub(crate) fn method(
    cx: &mut dyn Cx,
    fig: &RefCell<Figure>,
    h: HostMethod,
    slots: Vec<Option<Value>>,
    span: Span,
) -> R<Value> {
    let name = h.name();
    let Some(fm) = h.figure() else {
        return fail(span, format!("unknown method `{name}` on `Figure`"));
    };
    let (min, params) = fm.params();
    let mut args: Vec<Option<Value>> = slots.into_iter().skip(1).collect();
    if args.len() > params.len() {
        return fail(
            span,
            format!(
                "`{name}` takes at most {} arguments, not {}",
                params.len(),
                args.len()
            ),
        );
    }
    args.resize(params.len(), None);
    if let Some(k) = args.iter().take(min).position(Option::is_none) {
        return fail(span, format!("`{name}` needs its argument `{}`", params[k]));
    }
    let mut arg = |i: usize| args.get_mut(i).and_then(Option::take);
    let plot = |r: Result<(), String>| match r {
        Ok(()) => Ok(Value::Unit),
        Err(m) => fail(span, format!("`{name}`: {m}")),
    };
    use FigureMethod as M;
    match fm {
        M::Line | M::Scatter => {
            let x = numbers(arg(0), name, "x", span)?;
            let y = numbers(arg(1), name, "y", span)?;
            let label = str_arg(arg(2), name, "label", span)?;
            let mut f = fig.borrow_mut();
            plot(if fm == M::Line {
                f.line(x, y, label)
            } else {
                f.scatter(x, y, label)
            })
        }
        M::Hist => {
            let x = numbers(arg(0), name, "x", span)?;
            let bins = int_arg(arg(1), name, "bins", 30, span)?;
            let label = str_arg(arg(2), name, "label", span)?;
            plot(fig.borrow_mut().hist(&x, bins, label))
        }
        M::Image => {
            let im = image(arg(0), span)?;
            fig.borrow_mut().image(im);
            Ok(Value::Unit)
        }
        M::Title => {
            let s = str_arg(arg(0), name, "s", span)?;
            fig.borrow_mut().title(s);
            Ok(Value::Unit)
        }
        M::Xlabel => {
            let s = str_arg(arg(0), name, "s", span)?;
            fig.borrow_mut().xlabel(s);
            Ok(Value::Unit)
        }
        M::Ylabel => {
            let s = str_arg(arg(0), name, "s", span)?;
            fig.borrow_mut().ylabel(s);
            Ok(Value::Unit)
        }
        M::LogY => {
            fig.borrow_mut().log_y();
            Ok(Value::Unit)
        }
        M::Legend => {
            fig.borrow_mut().legend();
            Ok(Value::Unit)
        }
        M::Grid => {
            let rows = int_arg(arg(0), name, "rows", 1, span)?;
            let cols = int_arg(arg(1), name, "cols", 1, span)?;
            plot(fig.borrow_mut().grid(rows, cols))
        }
        M::Panel => {
            let i = int_arg(arg(0), name, "i", 0, span)?;
            plot(fig.borrow_mut().panel(i))
        }
        M::Save => {
            let Some(Value::Str(path)) = arg(0) else {
                return fail(span, "`save` needs a path (Str)");
            };
            // Every failure is the Res's Err: a program that saves can go on.
            let bytes = FileFormat::of_path(&path).and_then(|ff| fig.borrow().encode(ff));
            let written = bytes.and_then(|b| {
                cx.host()
                    .write_file(&path, &b)
                    .map_err(|e| format!("cannot write {path}: {e}"))
            });
            Ok(match written {
                Ok(()) => Value::Ok(Rc::new(Value::Unit)),
                Err(m) => Value::Err(Rc::new(Value::str(m))),
            })
        }
    }
}

/// An Int argument (an integral rank-0 tensor too), or its default.
fn int_arg(v: Option<Value>, f: &str, param: &str, default: i64, span: Span) -> R<i64> {
    let mut v = match v {
        None => return Ok(default),
        Some(v) => v,
    };
    crate::value::int_like(&mut v);
    if let Value::Int(i) = v {
        return Ok(i);
    }
    fail(
        span,
        format!("`{f}`'s `{param}` must be an Int, not `{}`", v.type_name()),
    )
}

fn str_arg(v: Option<Value>, f: &str, param: &str, span: Span) -> R<String> {
    match v {
        None => Ok(String::new()),
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(other) => fail(
            span,
            format!("`{f}`'s `{param}` must be a Str, not `{}`", other.type_name()),
        ),
    }
}

/// The numbers of a rank-1 tensor of any dtype, a Range, or an Arr of Ints
/// and F64s (spec §12.3).
fn numbers(v: Option<Value>, f: &str, param: &str, span: Span) -> R<Vec<f64>> {
    let bad = |what: String| fail(span, format!("`{f}`'s `{param}` {what}"));
    let Some(v) = v else {
        return bad("is missing".into());
    };
    if let Value::Arr(items) = &v {
        let mut out = Vec::new();
        if out.try_reserve_exact(items.len()).is_err() {
            return bad(format!("has too many elements ({})", items.len()));
        }
        for (i, it) in items.iter().enumerate() {
            if let Value::Int(n) = it {
                out.push(*n as f64);
            } else if let Value::F64(x) = it {
                out.push(*x);
            } else {
                return bad(format!(
                    "must hold numbers, but element {i} is a `{}`",
                    it.type_name()
                ));
            }
        }
        return Ok(out);
    }
    if let Value::Range(r) = &v {
        let n = r.len();
        if n > twill_plot::MAX_POINTS as u64 {
            return bad(format!("has {n} elements, more than {}", twill_plot::MAX_POINTS));
        }
        return Ok((0..n as i64).map(|k| (r.start + k * r.step) as f64).collect());
    }
    match v.as_tensor() {
        Some(t) if t.ndim() == 1 => t.to_f64_vec().or_else(|e| bad(e.0)),
        Some(t) => bad(format!(
            "must be a rank-1 tensor, not one of shape {:?} (reshape it to [{}])",
            t.shape(),
            t.numel()
        )),
        None => bad(format!(
            "must be a tensor or an Arr of numbers, not `{}`",
            v.type_name()
        )),
    }
}

/// `fig.image(t)`'s pixels: a [h, w] tensor as grey, a [h, w, 3] one as RGB.
fn image(v: Option<Value>, span: Span) -> R<Image> {
    let Some(t) = v.as_ref().and_then(Value::as_tensor) else {
        let got = v.map_or("nothing".to_owned(), |v| format!("`{}`", v.type_name()));
        return fail(span, format!("`image` needs a tensor, not {got}"));
    };
    let shape = t.shape().to_vec();
    let values = match t.to_f64_vec() {
        Ok(v) => v,
        Err(e) => return fail(span, format!("`image`: {}", e.0)),
    };
    let made = match shape.as_slice() {
        [h, w] => Image::grey(*h, *w, &values),
        [h, w, 3] => Image::rgb(*h, *w, &values, matches!(t.dtype(), DType::I8 | DType::I32)),
        _ => Err(format!(
            "a grey image is a [h, w] tensor and an RGB one [h, w, 3], not {shape:?}"
        )),
    };
    made.or_else(|m| fail(span, format!("`image`: {m}")))
}

/// How `display` (and a notebook's cell result) shows a value: its text as
/// `print` writes it and, when `rich`, a figure's PNG and SVG and the HTML
/// table of a tensor of rank ≤ 2 with at most 1000 elements.
pub fn shown(v: &Value, rich: bool) -> Result<Display, String> {
    let mut d = Display {
        text: display(v),
        ..Display::default()
    };
    if !rich {
        return Ok(d);
    }
    if let Value::Figure(f) = v {
        let f = f.borrow();
        d.svg = Some(f.svg());
        d.png = Some(f.png()?);
    } else if let Some(t) = v.as_tensor() {
        d.html = html_table(t);
    }
    Ok(d)
}

/// A tensor of rank ≤ 2 and at most [`HTML_MAX_ELEMENTS`] elements as an
/// HTML table headed by its shape and dtype; each cell is the element as
/// `print` shows it.
fn html_table(t: &Tensor) -> Option<String> {
    if t.ndim() > 2 || t.numel() > HTML_MAX_ELEMENTS {
        return None;
    }
    let shape = t.shape().to_vec();
    let (rows, cols) = match shape.as_slice() {
        [] => (1, 1),
        [n] => (1, *n),
        [r, c] => (*r, *c),
        _ => return None,
    };
    let cells: Vec<String> = t.scalars().map(twill_tensor::display::format_scalar).collect();
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "<table class=\"twill-tensor\"><caption>Tensor[{}] of shape [{}]</caption>",
        t.dtype(),
        dims.join(", ")
    );
    for r in 0..rows {
        out.push_str("<tr>");
        for c in 0..cols {
            let _ = write!(
                out,
                "<td>{}</td>",
                escape_html(cells.get(r * cols + c).map_or("", |s| s))
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    Some(out)
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
