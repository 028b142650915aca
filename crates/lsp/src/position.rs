//! Positions as the Language Server Protocol counts them (a zero-based
//! line and a column in UTF-16 code units) and byte offsets into a
//! document's text, both ways; a position past a line's end or the
//! text's end clamps to it, so a stale client position never fails.

use lsp_types::{Position, Range};

/// The LSP position of byte `offset` (clamped to the text, and back to a
/// character boundary).
pub(crate) fn position(text: &str, offset: usize) -> Position {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count();
    let character: usize = before[line_start..].chars().map(char::len_utf16).sum();
    Position {
        line: u32::try_from(line).unwrap_or(u32::MAX),
        character: u32::try_from(character).unwrap_or(u32::MAX),
    }
}

/// The byte offset of an LSP position.
pub(crate) fn offset(text: &str, pos: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let mut units = 0u32;
    for (i, c) in text[line_start..line_end].char_indices() {
        if units >= pos.character {
            return line_start + i;
        }
        units += c.len_utf16() as u32;
    }
    line_end
}

/// The range of bytes `start..end`.
pub(crate) fn range(text: &str, start: usize, end: usize) -> Range {
    Range {
        start: position(text, start),
        end: position(text, end),
    }
}

/// The range of a span's bytes.
pub(crate) fn span_range(text: &str, span: twill_syntax::Span) -> Range {
    range(text, span.start as usize, span.end as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_both_ways() {
        let text = "let é = 1\nlet 𝑥 = 2\n";
        // `=` on line 1 is after "let 𝑥 " (𝑥 is two UTF-16 units).
        let eq = text.rfind('=').unwrap();
        let p = position(text, eq);
        assert_eq!((p.line, p.character), (1, 7));
        assert_eq!(offset(text, p), eq);
        assert_eq!(offset(text, Position::new(0, 99)), text.find('\n').unwrap());
        assert_eq!(offset(text, Position::new(9, 0)), text.len());
        let p = position(text, 5);
        // Byte 5 is inside é: back to its start.
        assert_eq!((p.line, p.character), (0, 4));
    }
}
