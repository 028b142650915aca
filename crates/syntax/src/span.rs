//! The one source-position type of the whole interpreter: a half-open range
//! of byte offsets into one source file, named by its [`FileId`]. Every AST
//! node, diagnostic and runtime error carries one; the file's name and text
//! live in the session's source map, and line and column are computed only
//! when an error is rendered.

/// Which source file a span points into: an index into the session's
/// source map (the program, each standard-library file, each REPL entry).
/// The parser is told the id of the file it parses; nothing else assigns
/// one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range `start..end` in the file `file`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        // Sources larger than 2 GiB are refused before parsing, so this never truncates.
        Span {
            file,
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    /// The smallest span covering both. Both lie in one file (a node and
    /// its children); `self`'s file is kept.
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Converts a byte offset into a 1-based (line, column) pair, counting
/// columns in characters, as editors and `FILE:LINE:COL` readers expect.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let mut line = 1;
    let mut line_start = 0;
    for (i, b) in src.as_bytes()[..offset].iter().enumerate() {
        if *b == b'\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    let col = src
        .get(line_start..offset)
        .map(|s| s.chars().count())
        .unwrap_or(offset - line_start)
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let src = "ab\nc\u{e9}d\n";
        assert_eq!(line_col(src, 0), (1, 1));
        assert_eq!(line_col(src, 3), (2, 1));
        assert_eq!(line_col(src, 6), (2, 3));
        assert_eq!(line_col(src, 100), (3, 1));
    }
}
