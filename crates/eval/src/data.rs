//! Data in and out (spec §9): `read_csv`, `load_npy` and `save_npy` as plain
//! functions from paths and host values to host values, with every failure a
//! message (`Err(String)`) that names the file, and for CSV the line, and
//! says what is wrong. The builtin table wraps them; nothing here panics on
//! any input, however malformed.
//!
//! **`read_csv` gives a `Dict` of columns keyed by header name, in header
//! order** (spec §9): a column whose cells are all numbers is a rank-1 f64
//! tensor, any other an `Arr[Str]`. `cols["price"]` is a column by name,
//! and `cols.values()` the columns in order (`stack(cols.values()[0:64],
//! axis=1)` makes a design matrix). `write_csv` writes such a Dict back.
//!
//! CSV is RFC 4180 (comma, `"` quoting with `""` for a quote, quoted fields
//! may hold commas and newlines, `\n` or `\r\n` line ends), plus what
//! NumPy/pandas users expect: a UTF-8 byte-order mark is skipped, and so are
//! blank lines. A column is numeric when it has at least one non-empty cell
//! and every non-empty cell, with surrounding spaces and tabs removed, parses
//! as a Rust `f64` (so `nan`, `inf`, `-Infinity`, `1e-3`, `.5` are numbers);
//! an empty cell in a numeric column is an error rather than a silent switch
//! of the whole column to strings. With no data rows every column is an
//! empty f64 tensor. String cells are kept verbatim.
//!
//! NPY is NumPy's format, versions 1.0, 2.0 and 3.0: the dtypes twill shares
//! with NumPy (`b1 i1 i4 f2 f4 f8`) in either byte order (`|` and `=` mean
//! native, as NumPy reads them), C or Fortran order, any rank including 0.
//! `save_npy` writes exactly the bytes `numpy.save` writes (version 1.0, C
//! order, little-endian, the same header padding), atomically. bf16 has no
//! NPY dtype, so saving one is an error that says to cast to f32 (exact).

use std::borrow::Cow;
use std::rc::Rc;

use twill_tensor::storage::{Element, Storage};
use twill_tensor::{dispatch, DType, Tensor, TensorError};

use twill_check::text::Text;
use twill_host::Host;

use crate::value::{DictKey, DictVal, Value};

/// The whole file, or a message saying why it cannot be read.
fn read_file(host: &mut dyn Host, path: &str) -> Result<Vec<u8>, String> {
    host.read_file(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!("file not found: {path}")
        } else {
            format!("cannot read {path}: {e}")
        }
    })
}

// ---------------------------------------------------------------- CSV --

/// Reads a CSV file with a header row into a `Dict` of its columns keyed
/// by header name, in header order (spec §9; see the module comment for
/// the rules). Two columns of one name are an error.
pub(crate) fn read_csv(host: &mut dyn Host, path: &str) -> Result<Value, String> {
    let bytes = read_file(host, path)?;
    let (names, columns) = parse_csv(&bytes, path)?;
    let mut d = DictVal::default();
    for (name, col) in names.into_iter().zip(columns) {
        let key = DictKey::Str(Rc::new(Text::new(name.clone())));
        if d.get(&key).is_some() {
            return Err(format!("{path}: two columns are named {name:?}"));
        }
        d.insert(key, col)?;
    }
    Ok(Value::Dict(Rc::new(d)))
}

/// The text of a CSV file for `write_csv` (spec §9): a header row of the
/// Dict's keys, then one row per element of its columns, which are rank-1
/// tensors or Arrs of one length. Numbers are written as `print` writes
/// them (the shortest text that reads back to the same value), Bools as
/// `true`/`false`, and a field with a comma, a quote, a line break or
/// space at either end is quoted (RFC 4180).
// A column of any kind but a tensor or an Arr is the same error.
#[allow(clippy::wildcard_enum_match_arm)]
pub(crate) fn csv_text(cols: &DictVal) -> Result<String, String> {
    let mut header = Vec::new();
    let mut columns: Vec<Vec<String>> = Vec::new();
    for (k, v) in cols.iter() {
        let DictKey::Str(name) = k else {
            return Err(format!(
                "`write_csv` needs Str column names, not {}",
                crate::print::repr(&k.to_value())
            ));
        };
        let cells: Vec<String> = match v {
            Value::Arr(items) => items.iter().map(crate::print::display).collect(),
            t @ (Value::Tensor(_) | Value::Tracked(_)) => {
                let Some(t) = t.as_tensor() else {
                    return Err("`write_csv`: a column could not be read".into());
                };
                if t.ndim() != 1 {
                    return Err(format!(
                        "`write_csv`: column {name:?} is a tensor of shape {:?}; a column is rank 1",
                        t.shape()
                    ));
                }
                t.scalars().map(twill_tensor::display::format_scalar).collect()
            }
            other => {
                return Err(format!(
                    "`write_csv`: column {name:?} is a `{}`; a column is a rank-1 tensor or an Arr",
                    other.type_name()
                ))
            }
        };
        if let Some(first) = columns.first() {
            if first.len() != cells.len() {
                return Err(format!(
                    "`write_csv`: column {name:?} has {} values, but {:?} has {}",
                    cells.len(),
                    header.first().map_or("", |h: &String| h.as_str()),
                    first.len()
                ));
            }
        }
        header.push(name.to_string());
        columns.push(cells);
    }
    let field = |s: &str| {
        if s.contains([',', '"', '\n', '\r']) || s.starts_with([' ', '\t']) || s.ends_with([' ', '\t']) {
            format!("\"{}\"", s.replace('"', "\"\""))
        } else {
            s.to_string()
        }
    };
    let mut out = String::new();
    out.push_str(&header.iter().map(|h| field(h)).collect::<Vec<_>>().join(","));
    out.push('\n');
    let rows = columns.first().map_or(0, Vec::len);
    for r in 0..rows {
        let row: Vec<String> = columns.iter().map(|c| field(&c[r])).collect();
        out.push_str(&row.join(","));
        out.push('\n');
    }
    Ok(out)
}

/// One column while the data rows are scanned: its numbers for as long as
/// every non-empty cell has been one.
struct ColumnScan {
    numbers: Option<Vec<f64>>,
    first_empty_line: Option<usize>,
    has_value: bool,
}

/// The columns of a CSV text. Two passes keep memory at the size of the
/// result: the first checks the structure and parses numbers, the second
/// (only when some column is not numeric) collects the text of the string
/// columns.
fn parse_csv(bytes: &[u8], path: &str) -> Result<(Vec<String>, Vec<Value>), String> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let line = 1 + bytes[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count();
        format!("{path}:{line}: not UTF-8 text")
    })?;

    let mut fields = Vec::new();
    let mut reader = CsvReader::new(text, path);
    if reader.next_record(&mut fields)?.is_none() {
        return Err(format!(
            "{path}: the file is empty; a CSV file needs a header row"
        ));
    }
    let names: Vec<String> = fields.iter().map(|f| f.to_string()).collect();
    let mut scans: Vec<ColumnScan> = names
        .iter()
        .map(|_| ColumnScan {
            numbers: Some(Vec::new()),
            first_empty_line: None,
            has_value: false,
        })
        .collect();
    let mut rows = 0usize;
    while let Some(line) = reader.next_record(&mut fields)? {
        if fields.len() != names.len() {
            return Err(format!(
                "{path}:{line}: {} fields, but the header has {}",
                fields.len(),
                names.len()
            ));
        }
        for (scan, field) in scans.iter_mut().zip(&fields) {
            let cell = field.trim_matches([' ', '\t']);
            if cell.is_empty() {
                scan.first_empty_line.get_or_insert(line);
                if let Some(numbers) = &mut scan.numbers {
                    // A placeholder: a numeric column with an empty cell is
                    // an error below, so it never reaches the result.
                    numbers.push(f64::NAN);
                }
                continue;
            }
            scan.has_value = true;
            if let Some(numbers) = &mut scan.numbers {
                match cell.parse::<f64>() {
                    Ok(x) => numbers.push(x),
                    Err(_) => scan.numbers = None,
                }
            }
        }
        rows += 1;
    }

    // A column of only empty cells is a column of empty strings; with no
    // rows at all there is nothing against a column being numeric.
    let numeric: Vec<bool> = scans
        .iter()
        .map(|s| s.numbers.is_some() && (s.has_value || rows == 0))
        .collect();
    let empty_in_numeric = scans
        .iter()
        .enumerate()
        .filter(|&(c, _)| numeric[c])
        .filter_map(|(c, s)| s.first_empty_line.map(|line| (line, c)))
        .min();
    if let Some((line, c)) = empty_in_numeric {
        return Err(format!(
            "{path}:{line}: empty cell in numeric column {} ({:?}); missing values are not supported \
             (write nan)",
            c + 1,
            names[c]
        ));
    }

    let mut texts: Vec<Vec<Value>> = names.iter().map(|_| Vec::new()).collect();
    if numeric.iter().any(|n| !n) {
        let mut reader = CsvReader::new(text, path);
        reader.next_record(&mut fields)?;
        while reader.next_record(&mut fields)?.is_some() {
            for (c, field) in fields.drain(..).enumerate() {
                if !numeric[c] {
                    texts[c].push(Value::str(field.into_owned()));
                }
            }
        }
    }

    let columns = scans
        .into_iter()
        .zip(texts)
        .zip(numeric)
        .map(|((scan, text), numeric)| match scan.numbers {
            Some(numbers) if numeric => {
                let t = Tensor::from_vec(numbers, vec![rows]).map_err(|e| format!("{path}: {e}"))?;
                Ok(Value::Tensor(Rc::new(t)))
            }
            _ => Ok(Value::Arr(Rc::new(text))),
        })
        .collect::<Result<Vec<Value>, String>>()?;
    Ok((names, columns))
}

/// An RFC 4180 tokenizer that yields one record at a time. Fields borrow
/// from the text unless they contain a doubled quote.
struct CsvReader<'a> {
    text: &'a str,
    path: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> CsvReader<'a> {
    fn new(text: &'a str, path: &'a str) -> Self {
        CsvReader {
            text,
            path,
            pos: 0,
            line: 1,
        }
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.text.as_bytes().get(at).copied()
    }

    /// Whether a line ends at `at` (`\n`, or `\r\n`).
    fn line_end_at(&self, at: usize) -> bool {
        match self.byte(at) {
            Some(b'\n') => true,
            Some(b'\r') => self.byte(at + 1) == Some(b'\n'),
            _ => false,
        }
    }

    /// Moves past the line end at `pos`.
    fn skip_line_end(&mut self) {
        self.pos += if self.byte(self.pos) == Some(b'\r') { 2 } else { 1 };
        self.line += 1;
    }

    /// The next record's fields, replacing `out`'s contents, and the line it
    /// starts on; `None` at the end of the text. Blank lines are skipped.
    fn next_record(&mut self, out: &mut Vec<Cow<'a, str>>) -> Result<Option<usize>, String> {
        out.clear();
        while self.line_end_at(self.pos) {
            self.skip_line_end();
        }
        if self.pos >= self.text.len() {
            return Ok(None);
        }
        let start_line = self.line;
        loop {
            let field = if self.byte(self.pos) == Some(b'"') {
                self.quoted()?
            } else {
                self.unquoted()?
            };
            out.push(field);
            // Both field readers stop only at a comma, a line end or the end.
            if self.byte(self.pos) == Some(b',') {
                self.pos += 1;
                continue;
            }
            if self.line_end_at(self.pos) {
                self.skip_line_end();
            }
            return Ok(Some(start_line));
        }
    }

    fn unquoted(&mut self) -> Result<Cow<'a, str>, String> {
        let start = self.pos;
        while let Some(b) = self.byte(self.pos) {
            if b == b',' || self.line_end_at(self.pos) {
                break;
            }
            if b == b'"' {
                return Err(format!(
                    "{}:{}: a quote inside an unquoted field (quote the whole field, and double each \
                     quote inside it)",
                    self.path, self.line
                ));
            }
            self.pos += 1;
        }
        Ok(Cow::Borrowed(&self.text[start..self.pos]))
    }

    fn quoted(&mut self) -> Result<Cow<'a, str>, String> {
        let open_line = self.line;
        self.pos += 1;
        let mut start = self.pos;
        let mut owned: Option<String> = None;
        loop {
            match self.byte(self.pos) {
                None => {
                    return Err(format!(
                        "{}:{open_line}: a quoted field is never closed",
                        self.path
                    ))
                }
                Some(b'"') if self.byte(self.pos + 1) == Some(b'"') => {
                    // Keep the text up to and including the first quote.
                    owned
                        .get_or_insert_with(String::new)
                        .push_str(&self.text[start..=self.pos]);
                    self.pos += 2;
                    start = self.pos;
                }
                Some(b'"') => {
                    let end = self.pos;
                    self.pos += 1;
                    let ends_field =
                        matches!(self.byte(self.pos), None | Some(b',')) || self.line_end_at(self.pos);
                    if !ends_field {
                        return Err(format!(
                            "{}:{}: text after the closing quote of a field (a quote inside a \
                             quoted field must be doubled)",
                            self.path, self.line
                        ));
                    }
                    return Ok(match owned {
                        Some(mut s) => {
                            s.push_str(&self.text[start..end]);
                            Cow::Owned(s)
                        }
                        None => Cow::Borrowed(&self.text[start..end]),
                    });
                }
                Some(b'\n') => {
                    self.pos += 1;
                    self.line += 1;
                }
                Some(_) => self.pos += 1,
            }
        }
    }
}

// ---------------------------------------------------------------- NPY --

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// Reads an NPY file into a tensor of the matching dtype.
pub(crate) fn load_npy(host: &mut dyn Host, path: &str) -> Result<Value, String> {
    let bytes = read_file(host, path)?;
    let t = decode_npy(&bytes).map_err(|e| format!("{path}: {e}"))?;
    Ok(Value::Tensor(Rc::new(t)))
}

/// Writes `t` as an NPY file, atomically (spec §9).
pub(crate) fn save_npy(host: &mut dyn Host, path: &str, t: &Tensor) -> Result<(), String> {
    let bytes = encode_npy(t).map_err(|e| format!("cannot save {path}: {e}"))?;
    host.write_file(path, &bytes)
        .map_err(|e| format!("cannot write {path}: {e}"))
}

/// The dtype an NPY `descr` names, and whether its bytes are big-endian.
fn parse_descr(descr: &str) -> Result<(DType, bool), String> {
    let (order, code) = match descr.as_bytes().first() {
        Some(&c @ (b'<' | b'>' | b'|' | b'=')) => (Some(c), &descr[1..]),
        _ => (None, descr),
    };
    let dtype = match code {
        "b1" | "?" => DType::Bool,
        "i1" => DType::I8,
        "i4" => DType::I32,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        _ => {
            let size: Option<u32> = code.get(1..).and_then(|s| s.parse().ok());
            let numpy_name = match (code.as_bytes().first(), size) {
                (Some(b'i'), Some(n)) => format!(" (int{})", 8 * n),
                (Some(b'u'), Some(n)) => format!(" (uint{})", 8 * n),
                (Some(b'f'), Some(n)) => format!(" (float{})", 8 * n),
                (Some(b'c'), Some(n)) => format!(" (complex{})", 8 * n),
                (Some(b'O'), _) => " (Python objects)".to_string(),
                (Some(b'U' | b'S'), _) => " (strings)".to_string(),
                _ => String::new(),
            };
            return Err(format!(
                "dtype '{descr}'{numpy_name} is not supported; NPY files hold only twill's bool, i8, \
                 i32, f16, f32 and f64 (NumPy '|b1', '|i1', '<i4', '<f2', '<f4', '<f8'): convert \
                 with NumPy first, e.g. a.astype(np.int32)"
            ));
        }
    };
    let native_big = cfg!(target_endian = "big");
    let big = match order {
        Some(b'>') => true,
        Some(b'<') => false,
        _ => native_big,
    };
    Ok((dtype, big))
}

/// A value of the Python literal dict in an NPY header.
#[derive(Debug, PartialEq)]
enum HeaderValue {
    Str(String),
    Bool(bool),
    Shape(Vec<usize>),
}

/// A parser for the one Python literal NPY headers hold: a dict with string
/// keys whose values are strings, `True`/`False` and tuples of integers.
struct HeaderParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl HeaderParser<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.pos).is_some_and(|b| b.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!(
                "malformed header: expected '{}' at byte {}",
                c as char, self.pos
            ))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        self.skip_ws();
        let quote = match self.s.get(self.pos) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => {
                return Err(format!(
                    "malformed header: expected a string at byte {}",
                    self.pos
                ))
            }
        };
        let start = self.pos + 1;
        let len = self.s[start..]
            .iter()
            .position(|&b| b == quote || b == b'\\')
            .ok_or("malformed header: a string is never closed")?;
        if self.s[start + len] == b'\\' {
            return Err("malformed header: escapes in strings are not supported".into());
        }
        self.pos = start + len + 1;
        String::from_utf8(self.s[start..start + len].to_vec())
            .map_err(|_| "malformed header: a string is not UTF-8".into())
    }

    fn value(&mut self) -> Result<HeaderValue, String> {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        if rest.starts_with(b"True") {
            self.pos += 4;
            return Ok(HeaderValue::Bool(true));
        }
        if rest.starts_with(b"False") {
            self.pos += 5;
            return Ok(HeaderValue::Bool(false));
        }
        if self.eat(b'(') {
            let mut dims = Vec::new();
            let mut trailing_comma = false;
            while !self.eat(b')') {
                if !dims.is_empty() && !trailing_comma {
                    return Err(format!(
                        "malformed header: expected ',' or ')' at byte {}",
                        self.pos
                    ));
                }
                dims.push(self.integer()?);
                trailing_comma = self.eat(b',');
            }
            if dims.len() == 1 && !trailing_comma {
                return Err("malformed header: the shape is not a tuple".into());
            }
            return Ok(HeaderValue::Shape(dims));
        }
        self.string().map(HeaderValue::Str)
    }

    fn integer(&mut self) -> Result<usize, String> {
        self.skip_ws();
        let start = self.pos;
        while self.s.get(self.pos).is_some_and(u8::is_ascii_digit) {
            self.pos += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        let n = digits
            .parse::<usize>()
            .map_err(|_| format!("malformed header: expected a dimension at byte {start}"))?;
        // Python 2 wrote long integers as `3L`.
        if self.s.get(self.pos) == Some(&b'L') {
            self.pos += 1;
        }
        Ok(n)
    }

    fn dict(&mut self) -> Result<Vec<(String, HeaderValue)>, String> {
        self.expect(b'{')?;
        let mut entries = Vec::new();
        while !self.eat(b'}') {
            let key = self.string()?;
            self.expect(b':')?;
            entries.push((key, self.value()?));
            if !self.eat(b',') {
                self.expect(b'}')?;
                break;
            }
        }
        self.skip_ws();
        if self.pos != self.s.len() {
            return Err(format!("malformed header: unexpected text at byte {}", self.pos));
        }
        Ok(entries)
    }
}

/// The tensor an NPY file's bytes describe.
fn decode_npy(bytes: &[u8]) -> Result<Tensor, String> {
    if !bytes.starts_with(NPY_MAGIC) {
        let hint = if bytes.starts_with(b"PK\x03\x04") {
            " (it is a zip archive, perhaps an .npz file: unpack it, or save each array with np.save)"
        } else {
            ""
        };
        return Err(format!("not an NPY file{hint}"));
    }
    let truncated = || "truncated NPY file: the header is cut short".to_string();
    let major = *bytes.get(6).ok_or_else(truncated)?;
    let minor = *bytes.get(7).ok_or_else(truncated)?;
    let (header_len, header_start) = match major {
        1 => {
            let b = bytes.get(8..10).ok_or_else(truncated)?;
            (usize::from(u16::from_le_bytes([b[0], b[1]])), 10)
        }
        2 | 3 => {
            let b = bytes.get(8..12).ok_or_else(truncated)?;
            let n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            (usize::try_from(n).map_err(|_| truncated())?, 12)
        }
        _ => {
            return Err(format!(
                "NPY format version {major}.{minor} is not supported (1.0, 2.0 and 3.0 are)"
            ))
        }
    };
    let header = bytes
        .get(header_start..header_start + header_len)
        .ok_or_else(truncated)?;
    let data = &bytes[header_start + header_len..];

    let entries = HeaderParser { s: header, pos: 0 }.dict()?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (key, value) in entries {
        match (key.as_str(), value) {
            ("descr", HeaderValue::Str(s)) if descr.is_none() => descr = Some(s),
            ("fortran_order", HeaderValue::Bool(b)) if fortran.is_none() => fortran = Some(b),
            ("shape", HeaderValue::Shape(d)) if shape.is_none() => shape = Some(d),
            ("descr", _) => {
                return Err(
                    "the header's 'descr' is not a simple dtype (structured arrays are not supported)".into(),
                )
            }
            (key, _) => return Err(format!("malformed header: unexpected or repeated key '{key}'")),
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err("malformed header: it needs the keys 'descr', 'fortran_order' and 'shape'".into());
    };
    let (dtype, big_endian) = parse_descr(&descr)?;

    let size = dtype.size_in_bytes();
    let count = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
    let needed = count.and_then(|n| n.checked_mul(size));
    let (Some(count), Some(needed)) = (count, needed) else {
        return Err(format!(
            "shape {} has too many elements",
            twill_tensor::tensor::shape_str(&shape)
        ));
    };
    if data.len() != needed {
        let what = if data.len() < needed {
            "truncated NPY file"
        } else {
            "malformed NPY file"
        };
        return Err(format!(
            "{what}: shape {} of {descr} needs {needed} bytes of data, the file has {}",
            twill_tensor::tensor::shape_str(&shape),
            data.len()
        ));
    }
    if dtype == DType::Bool {
        if let Some(i) = data.iter().position(|&b| b > 1) {
            return Err(format!(
                "malformed NPY file: element {i} of a bool array is byte {}, not 0 or 1",
                data[i]
            ));
        }
    }

    let tensor_err = |e: TensorError| e.0;
    let mut storage = Storage::zeros(dtype, count).map_err(|e| tensor_err(e.into()))?;
    dispatch!(in &mut storage, v => fill_from_bytes(v, data, big_endian));
    if fortran && shape.len() > 1 {
        // Fortran order is C order of the reversed shape: read it so, and
        // reverse the axes back.
        let reversed: Vec<usize> = shape.iter().rev().copied().collect();
        let t = Tensor::from_storage(storage, reversed).map_err(tensor_err)?;
        t.reversed_axes().contiguous().map_err(tensor_err)
    } else {
        Tensor::from_storage(storage, shape).map_err(tensor_err)
    }
}

/// Decodes packed elements of `T`'s width; `data` holds exactly `out.len()`.
fn fill_from_bytes<T: Element>(out: &mut [T], data: &[u8], big_endian: bool) {
    let size = T::DTYPE.size_in_bytes();
    for (x, chunk) in out.iter_mut().zip(data.chunks_exact(size)) {
        let fold = |bits: u64, &b: &u8| (bits << 8) | u64::from(b);
        let bits = if big_endian {
            chunk.iter().fold(0, fold)
        } else {
            chunk.iter().rev().fold(0, fold)
        };
        *x = T::from_raw_bits(bits);
    }
}

/// The bytes `numpy.save` writes for `t` (NumPy 2.x: version 1.0 unless the
/// header needs more, C order, little-endian).
fn encode_npy(t: &Tensor) -> Result<Vec<u8>, String> {
    let descr = match t.dtype() {
        DType::Bool => "|b1",
        DType::I8 => "|i1",
        DType::I32 => "<i4",
        DType::Bf16 => {
            return Err("NPY has no bf16 dtype; save t.to(f32) instead (exact for every bf16 value)".into())
        }
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
    };
    let shape = t.shape();
    let shape_repr = match shape {
        [] => "()".to_string(),
        [n] => format!("({n},)"),
        dims => {
            let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
            format!("({})", parts.join(", "))
        }
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_repr}, }}");
    // NumPy leaves room for the first axis to grow to 21 digits, so that the
    // header can be rewritten in place when rows are appended.
    if let Some(first) = shape.first() {
        header.push_str(&" ".repeat(21usize.saturating_sub(first.to_string().len())));
    }
    // The data starts at a multiple of 64 bytes; the header ends in '\n'.
    let header_len_with_newline = header.len() + 1;
    let pad = |prefix: usize| 64 - (prefix + header_len_with_newline) % 64;
    let mut out = Vec::new();
    out.extend_from_slice(NPY_MAGIC);
    if let Ok(len) = u16::try_from(header_len_with_newline + pad(10)) {
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&len.to_le_bytes());
        header.push_str(&" ".repeat(pad(10)));
    } else {
        let len =
            u32::try_from(header_len_with_newline + pad(12)).map_err(|_| "the NPY header is too long")?;
        out.extend_from_slice(&[2, 0]);
        out.extend_from_slice(&len.to_le_bytes());
        header.push_str(&" ".repeat(pad(12)));
    }
    header.push('\n');
    out.extend_from_slice(header.as_bytes());

    let storage = t.to_storage().map_err(|e| e.to_string())?;
    out.try_reserve_exact(storage.nbytes())
        .map_err(|_| format!("cannot allocate {} bytes for the file", storage.nbytes()))?;
    dispatch!(in &storage, v => append_le_bytes(v, &mut out));
    Ok(out)
}

fn append_le_bytes<T: Element>(v: &[T], out: &mut Vec<u8>) {
    let size = T::DTYPE.size_in_bytes();
    for &x in v {
        out.extend_from_slice(&x.to_scalar().to_bits().to_le_bytes()[..size]);
    }
}

#[cfg(test)]
// A value of any other variant than the one a test expects is a failure.
#[allow(clippy::wildcard_enum_match_arm)]
mod tests {
    use super::*;
    use twill_tensor::convert::Scalar;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/data/");

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{FIXTURES}{name}")).expect("fixture exists")
    }

    /// These tests read and write real files.
    fn host() -> twill_host::RealHost {
        twill_host::RealHost::buffered(Vec::new())
    }

    /// A scratch file path for one test, unique to this process; the test
    /// removes it.
    fn scratch(name: &str) -> String {
        let file = format!("twill-data-test-{}-{name}", std::process::id());
        std::env::temp_dir().join(file).to_string_lossy().into_owned()
    }

    fn bits(t: &Tensor) -> Vec<u64> {
        t.scalars().map(Scalar::to_bits).collect()
    }

    fn f64_tensor(values: &[f64], shape: &[usize]) -> Tensor {
        Tensor::from_vec(values.to_vec(), shape.to_vec()).expect("shape fits")
    }

    fn csv(text: &str) -> Result<Vec<Value>, String> {
        parse_csv(text.as_bytes(), "t.csv").map(|(_, cols)| cols)
    }

    fn as_f64(v: &Value) -> Vec<f64> {
        match v {
            Value::Tensor(t) => {
                assert_eq!(t.dtype(), DType::F64);
                assert_eq!(t.ndim(), 1);
                t.to_f64_vec().expect("f64s")
            }
            other => panic!("expected a tensor, got {}", other.type_name()),
        }
    }

    fn as_strs(v: &Value) -> Vec<String> {
        match v {
            Value::Arr(a) => a
                .iter()
                .map(|s| match s {
                    Value::Str(s) => s.to_string(),
                    other => panic!("expected Str, got {}", other.type_name()),
                })
                .collect(),
            other => panic!("expected an Arr, got {}", other.type_name()),
        }
    }

    // ------------------------------------------------------------ CSV --

    #[test]
    fn csv_numeric_and_string_columns() {
        let cols = csv("x,name,y\n1,ada,2.5\n-3e2,grace,nan\n 4 ,\"hopper, g\",inf\n").unwrap();
        assert_eq!(cols.len(), 3);
        assert_eq!(as_f64(&cols[0]), vec![1.0, -300.0, 4.0]);
        assert_eq!(as_strs(&cols[1]), vec!["ada", "grace", "hopper, g"]);
        let y = as_f64(&cols[2]);
        assert_eq!(y[0], 2.5);
        assert!(y[1].is_nan());
        assert_eq!(y[2], f64::INFINITY);
    }

    #[test]
    fn csv_one_non_number_makes_a_string_column_verbatim() {
        let cols = csv("a,b\n1, 2\n1.50,x\n").unwrap();
        assert_eq!(as_f64(&cols[0]), vec![1.0, 1.5]);
        assert_eq!(as_strs(&cols[1]), vec![" 2", "x"]);
    }

    #[test]
    fn csv_quoting_crlf_bom_and_blank_lines() {
        let text = "\u{FEFF}id,note\r\n1,\"say \"\"hi\"\"\"\r\n\r\n2,\"two\nlines\"\r\n3,\"\"\r\n3,plain";
        let cols = csv(text).unwrap();
        assert_eq!(as_f64(&cols[0]), vec![1.0, 2.0, 3.0, 3.0]);
        assert_eq!(as_strs(&cols[1]), vec!["say \"hi\"", "two\nlines", "", "plain"]);
    }

    #[test]
    fn csv_quoted_numbers_are_numbers_and_all_empty_is_strings() {
        let cols = csv("a,b\n\"1\",\n\"2\",\n").unwrap();
        assert_eq!(as_f64(&cols[0]), vec![1.0, 2.0]);
        assert_eq!(as_strs(&cols[1]), vec!["", ""]);
    }

    #[test]
    fn csv_header_only_gives_empty_f64_columns() {
        let cols = csv("a,b\n").unwrap();
        assert_eq!(cols.len(), 2);
        assert_eq!(as_f64(&cols[1]), Vec::<f64>::new());
    }

    #[test]
    fn csv_errors_name_file_line_and_problem() {
        let cases = [
            ("", "t.csv: the file is empty; a CSV file needs a header row"),
            ("\n\n", "t.csv: the file is empty; a CSV file needs a header row"),
            ("a,b\n1,2\n3\n", "t.csv:3: 1 fields, but the header has 2"),
            ("a,b\n1,2\n3,4,5\n", "t.csv:3: 3 fields, but the header has 2"),
            ("a\n\"x\n", "t.csv:2: a quoted field is never closed"),
            ("a,b\n1,ab\"c\n", "t.csv:2: a quote inside an unquoted field"),
            ("a,b\n1,\"ab\"c\n", "t.csv:2: text after the closing quote"),
            ("a,b\n1,\"x\ny\"z\n", "t.csv:3: text after the closing quote"),
            (
                "a,b\n1,2\n,3\n4,\n",
                "t.csv:3: empty cell in numeric column 1 (\"a\")",
            ),
            (
                "a,b\n1,2\n5,\n,4\n",
                "t.csv:3: empty cell in numeric column 2 (\"b\")",
            ),
        ];
        for (text, want) in cases {
            let err = csv(text).unwrap_err();
            assert!(err.starts_with(want), "{text:?}: got {err:?}, want {want:?}");
        }
        let err = parse_csv(b"a\n1\n\xff\n", "t.csv").unwrap_err();
        assert_eq!(err, "t.csv:3: not UTF-8 text");
    }

    #[test]
    fn csv_file_not_found() {
        let err = read_csv(&mut host(), "/nonexistent/twill/x.csv").unwrap_err();
        assert_eq!(err, "file not found: /nonexistent/twill/x.csv");
    }

    #[test]
    fn csv_the_digits_example() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/digits.csv");
        let Value::Dict(d) = read_csv(&mut host(), path).unwrap() else {
            panic!("a Dict")
        };
        let names: Vec<String> = d
            .iter()
            .map(|(k, _)| crate::print::display(&k.to_value()))
            .collect();
        assert_eq!(names.len(), 65);
        assert_eq!(
            (names[0].as_str(), names[63].as_str(), names[64].as_str()),
            ("p0", "p63", "label")
        );
        let cols: Vec<Value> = d.iter().map(|(_, v)| v.clone()).collect();
        let label = as_f64(&cols[64]);
        assert_eq!(label.len(), 1797);
        assert_eq!(&label[..3], &[0.0, 1.0, 2.0]);
        assert!(cols[..64]
            .iter()
            .all(|c| as_f64(c).iter().all(|&p| (0.0..=16.0).contains(&p))));
    }

    // ------------------------------------------------------------ NPY --

    /// The C-order fixtures numpy wrote, with their dtype, shape and the bits
    /// of their elements (the values of tools/data/npy_fixtures.py).
    fn c_fixtures() -> Vec<(&'static str, DType, Vec<usize>, Vec<u64>)> {
        let f64_bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let f32_bits = |v: &[f32]| v.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>();
        vec![
            (
                "c_f64_3x3.npy",
                DType::F64,
                vec![3, 3],
                f64_bits(&[
                    0.1,
                    -0.0,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    5e-324,
                    f64::NAN,
                    f64::MAX,
                    -2.5,
                    3.0,
                ]),
            ),
            (
                "c_f32_6.npy",
                DType::F32,
                vec![6],
                f32_bits(&[0.1, -1.5, f32::MAX, 1e-45, f32::INFINITY, -0.0]),
            ),
            (
                "c_f16_2x2.npy",
                DType::F16,
                vec![2, 2],
                vec![0x2E66, 0xFBFF, 0x0001, 0x7C00],
            ),
            ("c_i8_5.npy", DType::I8, vec![5], vec![0x80, 0xFF, 0, 1, 0x7F]),
            (
                "c_i32_2x2.npy",
                DType::I32,
                vec![2, 2],
                vec![0x8000_0000, 0xFFFF_FFFF, 0, 0x7FFF_FFFF],
            ),
            ("c_bool_2x3.npy", DType::Bool, vec![2, 3], vec![1, 0, 1, 0, 0, 1]),
            ("c_f64_scalar.npy", DType::F64, vec![], f64_bits(&[2.5])),
            ("c_f32_0x3.npy", DType::F32, vec![0, 3], vec![]),
            (
                "c_i8_rank14.npy",
                DType::I8,
                [1; 13].into_iter().chain([100]).collect(),
                (0..100).collect(),
            ),
        ]
    }

    #[test]
    fn npy_reads_numpy_files_and_writes_the_same_bytes() {
        for (name, dtype, shape, want) in c_fixtures() {
            let bytes = fixture(name);
            let t = decode_npy(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((t.dtype(), t.shape()), (dtype, &shape[..]), "{name}");
            // NaN's bits compare exactly too: the payload survives.
            assert_eq!(bits(&t), want, "{name}");
            assert_eq!(
                encode_npy(&t).unwrap(),
                bytes,
                "{name}: save_npy differs from numpy.save"
            );
        }
    }

    #[test]
    fn npy_fortran_order_big_endian_and_version_2() {
        let t = decode_npy(&fixture("fortran_i32_2x3x4.npy")).unwrap();
        assert_eq!((t.dtype(), t.shape()), (DType::I32, &[2, 3, 4][..]));
        let want: Vec<u64> = (0..2)
            .flat_map(|i| (0..3).flat_map(move |j| (0..4).map(move |k| 100 * i + 10 * j + k)))
            .collect();
        assert_eq!(bits(&t), want);

        let t = decode_npy(&fixture("big_f64_2x2.npy")).unwrap();
        assert_eq!(t.to_f64_vec().expect("f64s"), vec![1.5, -2.0, f64::INFINITY, 0.1]);
        let t = decode_npy(&fixture("big_i32_3.npy")).unwrap();
        assert_eq!(t.to_f64_vec().expect("f64s"), vec![1.0, -2.0, 70000.0]);

        let t = decode_npy(&fixture("v2_f32_2x2.npy")).unwrap();
        assert_eq!((t.dtype(), t.shape()), (DType::F32, &[2, 2][..]));
        assert_eq!(t.to_f64_vec().expect("f64s"), vec![1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn npy_unsupported_dtype_says_what_to_do() {
        let err = decode_npy(&fixture("int64_3.npy")).unwrap_err();
        assert!(err.starts_with("dtype '<i8' (int64) is not supported"), "{err}");
        assert!(err.contains("astype(np.int32)"), "{err}");
    }

    #[test]
    fn npy_byte_order_chars_numpy_accepts() {
        for (descr, dtype) in [
            ("|f8", DType::F64),
            ("=f4", DType::F32),
            ("f2", DType::F16),
            (">i1", DType::I8),
            ("?", DType::Bool),
        ] {
            assert_eq!(parse_descr(descr).unwrap().0, dtype, "{descr}");
        }
        assert!(parse_descr(">f8").unwrap().1);
        assert!(parse_descr("<u1").unwrap_err().contains("(uint8)"));
    }

    #[test]
    fn npy_round_trips_every_dtype_through_files() {
        let values = [0.0, -1.0, 2.5, 100.0, -0.5, 7.0];
        let base = f64_tensor(&values, &[2, 3]);
        for dtype in DType::ALL {
            if dtype == DType::Bf16 {
                continue;
            }
            // Every layout a tensor can have: contiguous, a transposed view,
            // rank 0 and empty.
            let t = base.cast(dtype).unwrap();
            let cases = [
                t.clone(),
                t.reversed_axes(),
                f64_tensor(&[3.0], &[]).cast(dtype).unwrap(),
                f64_tensor(&[], &[2, 0, 3]).cast(dtype).unwrap(),
            ];
            for (k, t) in cases.iter().enumerate() {
                let path = scratch(&format!("{dtype}_{k}.npy"));
                save_npy(&mut host(), &path, t).unwrap();
                let Value::Tensor(back) = load_npy(&mut host(), &path).unwrap() else {
                    panic!("a tensor")
                };
                assert_eq!(
                    (back.dtype(), back.shape()),
                    (dtype, t.shape()),
                    "{dtype} case {k}"
                );
                assert_eq!(bits(&back), bits(t), "{dtype} case {k}");
                std::fs::remove_file(&path).unwrap();
            }
        }
    }

    #[test]
    fn npy_bf16_cannot_be_saved() {
        let t = f64_tensor(&[1.0], &[1]).cast(DType::Bf16).unwrap();
        let path = scratch("bf16.npy");
        let err = save_npy(&mut host(), &path, &t).unwrap_err();
        assert!(err.contains("NPY has no bf16 dtype; save t.to(f32)"), "{err}");
        assert!(!std::path::Path::new(&path).exists());
    }

    #[test]
    fn npy_malformed_headers_are_errors() {
        let header = |dict: &str, data: &[u8]| {
            let mut b = NPY_MAGIC.to_vec();
            b.extend_from_slice(&[1, 0]);
            b.extend_from_slice(&(dict.len() as u16).to_le_bytes());
            b.extend_from_slice(dict.as_bytes());
            b.extend_from_slice(data);
            b
        };
        let ok = decode_npy(&header(
            "{\"shape\": (2,), 'descr':'<i4', 'fortran_order':False}\n",
            &[1, 0, 0, 0, 2, 0, 0, 0],
        ))
        .unwrap();
        assert_eq!(ok.to_f64_vec().expect("f64s"), vec![1.0, 2.0]);
        let cases: [(&str, &[u8], &str); 9] = [
            (
                "{'descr': '<f8', 'fortran_order': False}",
                &[],
                "malformed header: it needs the keys",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2), }",
                &[0; 16],
                "the shape is not a tuple",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), 'x': 1}",
                &[0; 8],
                "malformed header",
            ),
            (
                "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,)}",
                &[0; 8],
                "malformed header",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                &[0; 8],
                "truncated NPY file",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
                &[0; 9],
                "malformed NPY file",
            ),
            (
                "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                &[1, 2],
                "element 1 of a bool array is byte 2",
            ),
            (
                "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
                &[],
                "too many elements",
            ),
            (
                "{'descr': '<f8', 'fortran_order': maybe, 'shape': (1,), }",
                &[0; 8],
                "malformed header",
            ),
        ];
        for (dict, data, want) in cases {
            let err = decode_npy(&header(dict, data)).unwrap_err();
            assert!(err.contains(want), "{dict}: got {err:?}, want {want:?}");
        }
        assert!(decode_npy(b"PK\x03\x04rest").unwrap_err().contains(".npz"));
        let mut v9 = fixture("c_i8_5.npy");
        v9[6] = 9;
        assert!(decode_npy(&v9).unwrap_err().contains("version 9.0"));
        assert_eq!(
            load_npy(&mut host(), "/nonexistent/twill/x.npy").unwrap_err(),
            "file not found: /nonexistent/twill/x.npy"
        );
    }

    /// Every prefix of every fixture is an error, and damaged bytes anywhere
    /// in a header give an error or a tensor, never a panic.
    #[test]
    fn npy_fuzz_truncated_and_damaged_files() {
        let names = [
            "c_f64_3x3.npy",
            "c_f16_2x2.npy",
            "c_bool_2x3.npy",
            "fortran_i32_2x3x4.npy",
            "v2_f32_2x2.npy",
            "big_i32_3.npy",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for name in names {
            let bytes = fixture(name);
            for len in 0..bytes.len() {
                assert!(decode_npy(&bytes[..len]).is_err(), "{name} cut to {len} bytes");
            }
            for _ in 0..2000 {
                let mut damaged = bytes.clone();
                for _ in 0..1 + next() % 3 {
                    let at = (next() % 128) as usize % damaged.len();
                    damaged[at] = next() as u8;
                }
                let _ = decode_npy(&damaged);
            }
        }
    }

    #[test]
    fn csv_fuzz_never_panics() {
        let alphabet = b"ab1.,\"\n\r \xC3\xA9e-";
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        for _ in 0..20000 {
            let len = next() % 24;
            let text: Vec<u8> = (0..len)
                .map(|_| alphabet[next() as usize % alphabet.len()])
                .collect();
            let _ = parse_csv(&text, "f.csv");
        }
    }
}
