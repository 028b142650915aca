//! `file://` URIs and file paths, both ways (percent-encoding as RFC 3986
//! asks, so a path with spaces or non-ASCII names round-trips). A
//! document whose URI is not a file (an unsaved buffer) is checked under
//! the URI's text as its name; its imports are then looked for from the
//! current directory.

use std::str::FromStr;

use lsp_types::Uri;

/// The path a `file://` URI names (`None` for any other scheme).
pub(crate) fn to_path(uri: &Uri) -> Option<String> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file://host/path`: only an empty host (or localhost) is this machine.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

/// The `file://` URI of an absolute path.
pub(crate) fn from_path(path: &str) -> Option<Uri> {
    let absolute = if path.starts_with('/') {
        path.to_string()
    } else {
        let cwd = std::env::current_dir().ok()?;
        format!("{}/{path}", cwd.to_str()?)
    };
    let mut s = String::from("file://");
    for b in absolute.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip() {
        let uri = from_path("/tmp/my dir/é.tw").unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/my%20dir/%C3%A9.tw");
        assert_eq!(to_path(&uri).unwrap(), "/tmp/my dir/é.tw");
        assert_eq!(to_path(&Uri::from_str("untitled:Untitled-1").unwrap()), None);
    }
}
