//! Python's format-spec language (spec §10.7), for f-strings and
//! `format(x, spec)`: `[[fill]align][sign][z][#][0][width][,|_][.precision][type]`.
//! [`Spec::parse`] reads a spec (the checker calls it on every literal
//! spec, so a bad one is a static error); [`Spec::int`], [`Spec::float`]
//! and [`Spec::text`] render an Int, an F64 and any other value's text the
//! way CPython's `format()` does, byte for byte: the generator
//! `tools/oracle/format_spec.py` writes CPython's results for a grid of
//! values and specs to `testdata/vectors/format_spec.tsv`, and the test
//! below compares every one. Two deliberate differences: `s` formats any
//! value (as its `str`), and a float with no type and no precision is the
//! caller's text of it (twill's `str`, not Python's `repr`), padded.
//! Width and precision are at most [`MAX_FIELD`]. Depends on nothing else
//! in the crate.

use std::fmt::Write;

/// The largest width or precision a spec may ask for.
pub const MAX_FIELD: usize = 10_000;

/// How a field is aligned in its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
    Center,
    /// Padding between the sign (and `0x` prefix) and the digits.
    AfterSign,
}

/// What a number's sign shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// `-` (the default): negative numbers only.
    Minus,
    /// `+`: both signs.
    Plus,
    /// ` `: a space for positive numbers.
    Space,
}

/// A parsed format spec.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub fill: Option<char>,
    pub align: Option<Align>,
    pub sign: Option<Sign>,
    /// `z`: negative zero (after rounding) prints as zero.
    pub no_neg_zero: bool,
    /// `#`: the alternate form (`0x` prefixes, a point that always shows).
    pub alternate: bool,
    /// `0`: sign-aware zero padding.
    pub zero: bool,
    pub width: usize,
    /// `,` or `_`.
    pub grouping: Option<char>,
    pub precision: Option<usize>,
    pub ty: Option<char>,
}

/// Whether `c` is a presentation type of the spec language.
fn is_type(c: char) -> bool {
    matches!(
        c,
        'd' | 'b' | 'o' | 'x' | 'X' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%' | 's'
    )
}

fn align_of(c: char) -> Option<Align> {
    match c {
        '<' => Some(Align::Left),
        '>' => Some(Align::Right),
        '^' => Some(Align::Center),
        '=' => Some(Align::AfterSign),
        _ => None,
    }
}

impl Spec {
    /// Reads a spec; the error says what is wrong with it.
    pub fn parse(text: &str) -> Result<Spec, String> {
        let cs: Vec<char> = text.chars().collect();
        let mut i = 0;
        let mut spec = Spec {
            fill: None,
            align: None,
            sign: None,
            no_neg_zero: false,
            alternate: false,
            zero: false,
            width: 0,
            grouping: None,
            precision: None,
            ty: None,
        };
        if let Some(a) = cs.get(1).copied().and_then(align_of) {
            spec.fill = cs.first().copied();
            spec.align = Some(a);
            i = 2;
        } else if let Some(a) = cs.first().copied().and_then(align_of) {
            spec.align = Some(a);
            i = 1;
        }
        match cs.get(i) {
            Some('+') => spec.sign = Some(Sign::Plus),
            Some('-') => spec.sign = Some(Sign::Minus),
            Some(' ') => spec.sign = Some(Sign::Space),
            _ => {}
        }
        if spec.sign.is_some() {
            i += 1;
        }
        if cs.get(i) == Some(&'z') {
            spec.no_neg_zero = true;
            i += 1;
        }
        if cs.get(i) == Some(&'#') {
            spec.alternate = true;
            i += 1;
        }
        if cs.get(i) == Some(&'0') {
            spec.zero = true;
            i += 1;
        }
        let number = |i: &mut usize, what: &str| -> Result<Option<usize>, String> {
            let start = *i;
            while cs.get(*i).is_some_and(|c| c.is_ascii_digit()) {
                *i += 1;
            }
            if *i == start {
                return Ok(None);
            }
            let digits: String = cs[start..*i].iter().collect();
            match digits.parse::<usize>() {
                Ok(n) if n <= MAX_FIELD => Ok(Some(n)),
                _ => Err(format!("the {what} {digits} is too large (at most {MAX_FIELD})")),
            }
        };
        spec.width = number(&mut i, "width")?.unwrap_or(0);
        if let Some(&g @ (',' | '_')) = cs.get(i) {
            spec.grouping = Some(g);
            i += 1;
            if let Some(&(',' | '_')) = cs.get(i) {
                return Err("more than one grouping option (`,` or `_`)".into());
            }
        }
        if cs.get(i) == Some(&'.') {
            i += 1;
            match number(&mut i, "precision")? {
                Some(p) => spec.precision = Some(p),
                None => return Err("`.` must be followed by a precision".into()),
            }
        }
        if let Some(&c) = cs.get(i) {
            if is_type(c) && i + 1 == cs.len() {
                spec.ty = Some(c);
            } else {
                return Err(format!(
                    "invalid format spec `{text}`: expected [[fill]align][sign][z][#][0][width][,|_][.precision][type], \
                     the types being d b o x X e E f F g G % s"
                ));
            }
        }
        Ok(spec)
    }

    /// The spec's padding character.
    fn fill_char(&self) -> char {
        match (self.fill, self.zero) {
            (Some(c), _) => c,
            (None, true) => '0',
            (None, false) => ' ',
        }
    }

    /// A number's alignment: as given, `=` under the `0` flag, else right.
    fn number_align(&self) -> Align {
        match (self.align, self.zero) {
            (Some(a), _) => a,
            (None, true) => Align::AfterSign,
            (None, false) => Align::Right,
        }
    }

    fn sign_text(&self, negative: bool) -> &'static str {
        match (negative, self.sign.unwrap_or(Sign::Minus)) {
            (true, _) => "-",
            (false, Sign::Plus) => "+",
            (false, Sign::Space) => " ",
            (false, Sign::Minus) => "",
        }
    }

    /// Formats an Int. A float type (`e f g %` …) formats it as an F64,
    /// as Python does; `s` formats `text`, its `str`.
    pub fn int(&self, n: i64, text: &str) -> Result<String, String> {
        let base = match self.ty {
            None | Some('d') => 10,
            Some('b') => 2,
            Some('o') => 8,
            Some('x' | 'X') => 16,
            Some('s') => return self.text(text),
            Some(_) => return self.float(n as f64, text),
        };
        if self.precision.is_some() {
            return Err("a precision is not allowed in an integer format spec".into());
        }
        if self.no_neg_zero {
            return Err("`z` (negative zero) is not allowed in an integer format spec".into());
        }
        if self.grouping == Some(',') && base != 10 {
            return Err(format!("`,` cannot be used with `{}`", self.ty.unwrap_or('d')));
        }
        let magnitude = n.unsigned_abs();
        let mut digits = match base {
            2 => format!("{magnitude:b}"),
            8 => format!("{magnitude:o}"),
            16 if self.ty == Some('X') => format!("{magnitude:X}"),
            16 => format!("{magnitude:x}"),
            _ => magnitude.to_string(),
        };
        let prefix = match (self.alternate, self.ty) {
            (true, Some('b')) => "0b",
            (true, Some('o')) => "0o",
            (true, Some('x')) => "0x",
            (true, Some('X')) => "0X",
            _ => "",
        };
        let every = if base == 10 { 3 } else { 4 };
        let sign = self.sign_text(n < 0);
        if let Some(sep) = self.grouping {
            digits = self.grouped(&digits, sep, every, sign.len() + prefix.len());
        }
        Ok(self.pad_number(sign, prefix, &digits))
    }

    /// Formats an F64. With no type and no precision the text is `text`
    /// (the caller's shortest form), with the sign and padding applied.
    pub fn float(&self, x: f64, text: &str) -> Result<String, String> {
        let ty = match self.ty {
            Some('d' | 'b' | 'o' | 'x' | 'X') => {
                return Err(format!("`{}` formats an Int, not an F64", self.ty.unwrap_or('d')))
            }
            Some('s') => return self.text(text),
            other => other,
        };
        let negative = x.is_sign_negative() && !x.is_nan();
        let upper = matches!(ty, Some('E' | 'F' | 'G'));
        // `%` scales first (in f64, as Python does), so it can overflow.
        let x = if ty == Some('%') { x * 100.0 } else { x };
        if !x.is_finite() {
            let word = match (x.is_nan(), upper) {
                (true, false) => "nan",
                (true, true) => "NAN",
                (false, false) => "inf",
                (false, true) => "INF",
            };
            let suffix = if ty == Some('%') { "%" } else { "" };
            return Ok(self.pad_number(self.sign_text(negative), "", &format!("{word}{suffix}")));
        }
        let a = x.abs();
        let mut body = match (ty, self.precision) {
            (None, None) => {
                let mut t = text.trim_start_matches('-').to_string();
                // `#`: the point always shows, before any exponent.
                if self.alternate && !t.contains('.') {
                    let at = t.find(['e', 'E']).unwrap_or(t.len());
                    t.insert(at, '.');
                }
                t
            }
            (Some('f' | 'F'), p) => fixed(a, p.unwrap_or(6), self.alternate),
            (Some('e' | 'E'), p) => exponent(a, p.unwrap_or(6), self.alternate, upper),
            (Some('%'), p) => fixed(a, p.unwrap_or(6), self.alternate) + "%",
            (Some('g' | 'G'), p) => general(a, p.unwrap_or(6), self.alternate, upper, false),
            (None, Some(p)) => general(a, p, self.alternate, false, true),
            (Some(_), _) => return Err("an unknown format type for an F64".into()),
        };
        // `z`: a zero (after rounding) prints without its minus sign.
        let is_zero = !body.chars().any(|c| c.is_ascii_digit() && c != '0');
        let negative = negative && !(self.no_neg_zero && is_zero);
        let sign = self.sign_text(negative);
        if let Some(sep) = self.grouping {
            let int_len = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
            let (int, rest) = body.split_at(int_len);
            let grouped = self.grouped(int, sep, 3, sign.len() + rest.chars().count());
            body = grouped + rest;
        }
        Ok(self.pad_number(sign, "", &body))
    }

    /// Formats text (a Str, a Bool, any other value's `str`): the precision
    /// keeps that many characters; numbers' options are errors.
    pub fn text(&self, text: &str) -> Result<String, String> {
        if !matches!(self.ty, None | Some('s')) {
            return Err(format!("`{}` formats a number, not text", self.ty.unwrap_or('s')));
        }
        if self.sign.is_some() {
            return Err("a sign is not allowed in a text format spec".into());
        }
        if self.alternate {
            return Err("`#` is not allowed in a text format spec".into());
        }
        if self.no_neg_zero {
            return Err("`z` is not allowed in a text format spec".into());
        }
        if self.grouping.is_some() {
            return Err("a grouping option is not allowed in a text format spec".into());
        }
        if self.align == Some(Align::AfterSign) {
            return Err("`=` alignment is not allowed in a text format spec".into());
        }
        let kept: String = match self.precision {
            Some(p) => text.chars().take(p).collect(),
            None => text.to_string(),
        };
        Ok(pad(
            &kept,
            self.fill_char(),
            self.align.unwrap_or(Align::Left),
            self.width,
        ))
    }

    /// `digits` with `sep` every `every` digits from the right; under zero
    /// padding, zeros are added first (and grouped too) until the field,
    /// with `others` characters beside the digits, is as wide as the spec.
    fn grouped(&self, digits: &str, sep: char, every: usize, others: usize) -> String {
        let group = |d: &str| {
            let n = d.len();
            let mut out = String::with_capacity(n + n / every);
            for (i, c) in d.chars().enumerate() {
                if i > 0 && (n - i).is_multiple_of(every) {
                    out.push(sep);
                }
                out.push(c);
            }
            out
        };
        // Python groups the padding when it is zeros after the sign: the
        // `0` flag, or a `0` fill with `=` alignment (`0=8,`, `=08,`).
        let zero_padded = self.fill_char() == '0' && self.number_align() == Align::AfterSign;
        if !zero_padded {
            return group(digits);
        }
        let mut d = digits.to_string();
        let mut out = group(&d);
        while out.chars().count() + others < self.width {
            d.insert(0, '0');
            out = group(&d);
        }
        out
    }

    /// A number's field: sign, prefix and digits, padded to the width.
    fn pad_number(&self, sign: &str, prefix: &str, digits: &str) -> String {
        let len = sign.chars().count() + prefix.len() + digits.chars().count();
        let align = self.number_align();
        if align == Align::AfterSign {
            let mut out = String::new();
            out.push_str(sign);
            out.push_str(prefix);
            for _ in len..self.width {
                out.push(self.fill_char());
            }
            out.push_str(digits);
            return out;
        }
        let mut whole = String::new();
        let _ = write!(whole, "{sign}{prefix}{digits}");
        pad(&whole, self.fill_char(), align, self.width)
    }
}

/// `s` padded with `fill` to `width` characters.
fn pad(s: &str, fill: char, align: Align, width: usize) -> String {
    let len = s.chars().count();
    if len >= width {
        return s.to_string();
    }
    let room = width - len;
    let (left, right) = match align {
        Align::Left => (0, room),
        Align::Right | Align::AfterSign => (room, 0),
        Align::Center => (room / 2, room - room / 2),
    };
    let mut out = String::with_capacity(s.len() + room * fill.len_utf8());
    out.extend(std::iter::repeat_n(fill, left));
    out.push_str(s);
    out.extend(std::iter::repeat_n(fill, right));
    out
}

/// `a` (finite, not negative) with `p` digits after the point, correctly
/// rounded (ties to even, on the exact value); `#` keeps a point at p = 0.
fn fixed(a: f64, p: usize, alternate: bool) -> String {
    let mut s = format!("{a:.p$}");
    if alternate && p == 0 {
        s.push('.');
    }
    s
}

/// The digits of `a` rounded to `n` significant digits and the decimal
/// exponent of the first one.
fn significant(a: f64, n: usize) -> (String, i32) {
    let s = format!("{:.*e}", n.saturating_sub(1), a);
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// `d.ddd` + `e±XX` from significant digits and an exponent.
fn with_exponent(digits: &str, exp: i32, point: bool, upper: bool) -> String {
    let mut out = String::new();
    out.push_str(&digits[..1.min(digits.len())]);
    if digits.len() > 1 || point {
        out.push('.');
    }
    out.push_str(digits.get(1..).unwrap_or(""));
    out.push(if upper { 'E' } else { 'e' });
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
    out
}

/// `e`: `p` digits after the point of the mantissa.
fn exponent(a: f64, p: usize, alternate: bool, upper: bool) -> String {
    let (digits, exp) = significant(a, p + 1);
    let exp = if a == 0.0 { 0 } else { exp };
    with_exponent(&digits, exp, alternate && p == 0, upper)
}

/// `g` (and no type with a precision, `dot0`): `p` significant digits,
/// fixed notation when the exponent is from −4 up to p − 1 (p − 2 for
/// `dot0`, which also keeps one digit after the point), else exponent
/// notation; trailing zeros go unless `#`.
fn general(a: f64, p: usize, alternate: bool, upper: bool, dot0: bool) -> String {
    let p = p.max(1);
    let (mut digits, exp) = significant(a, p);
    let exp = if a == 0.0 { 0 } else { exp };
    let limit = if dot0 { p as i32 - 1 } else { p as i32 };
    if !alternate {
        while digits.len() > 1 && digits.ends_with('0') {
            digits.pop();
        }
    }
    if exp < -4 || exp >= limit {
        return with_exponent(&digits, exp, alternate, upper);
    }
    // Fixed notation from the same digits: `exp + 1` of them before the point.
    let mut out = String::new();
    if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let before = exp as usize + 1;
        let mut d = digits.clone();
        while d.len() < before {
            d.push('0');
        }
        out.push_str(&d[..before]);
        let after = &d[before..];
        if !after.is_empty() {
            out.push('.');
            out.push_str(after);
        } else if alternate || dot0 {
            out.push('.');
            if dot0 && !alternate {
                out.push('0');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CPython's `format(value, spec)` for a grid of values and specs
    /// (`tools/oracle/format_spec.py`): every case must match byte for
    /// byte, and every spec CPython rejects must be rejected.
    #[test]
    fn matches_cpython_format() {
        let text = include_str!("../../../testdata/vectors/format_spec.tsv");
        let mut failures = Vec::new();
        let mut n = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            let [kind, value, shown, spec_text, status, out] = f[..] else {
                panic!("bad line {line:?}");
            };
            let got = Spec::parse(spec_text).and_then(|spec| match kind {
                "int" => spec.int(value.parse().unwrap(), shown),
                "float" => spec.float(f64::from_bits(u64::from_str_radix(value, 16).unwrap()), shown),
                _ => spec.text(shown),
            });
            n += 1;
            match (status, got) {
                ("ok", Ok(g)) if g == out => {}
                ("err", Err(_)) => {}
                (_, g) => failures.push(format!(
                    "{kind} {shown} {spec_text:?}: want {status} {out:?}, got {g:?}"
                )),
            }
        }
        assert!(n > 30_000, "only {n} cases");
        assert!(
            failures.is_empty(),
            "{} of {n} cases differ:\n{}",
            failures.len(),
            failures.iter().take(60).cloned().collect::<Vec<_>>().join("\n")
        );
    }

    #[test]
    fn parse_rejects_what_python_rejects() {
        for bad in [
            "q", ".f", "10.2.3f", ",,", "d5", "%%", ".100001f", "100001", "<<<",
        ] {
            assert!(Spec::parse(bad).is_err(), "{bad:?} parsed");
        }
        for good in [
            "", "<", "<>", "*^10", "+.3e", " 08.2f", "z.1f", "#x", "_b", ",.2%", "s", ">10s", "=+10",
        ] {
            assert!(Spec::parse(good).is_ok(), "{good:?} rejected");
        }
    }
}
