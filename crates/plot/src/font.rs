//! The bundled font, DejaVu Sans (fonts/DejaVuSans.ttf, its licence beside
//! it): the only font a figure uses, in the SVG's `font-family` and in the
//! rasteriser's font database, and the one whose advance widths lay out text.

use skrifa::instance::{LocationRef, Size};
use skrifa::{FontRef, MetadataProvider};

/// The font file's bytes.
pub(crate) static DEJAVU_SANS: &[u8] = include_bytes!("../fonts/DejaVuSans.ttf");

/// The family name the SVG asks for, which the bundled font provides.
pub(crate) const FAMILY: &str = "DejaVu Sans";

/// The width of a line of text at a font size, in pixels: the sum of its
/// glyphs' advances (no kerning — a layout estimate, not a shaping). A
/// character the font lacks counts as 0.6 em.
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    let Ok(font) = FontRef::new(DEJAVU_SANS) else {
        return s.chars().count() as f64 * 0.6 * size;
    };
    let charmap = font.charmap();
    let metrics = font.glyph_metrics(Size::new(size as f32), LocationRef::default());
    s.chars()
        .map(|c| {
            charmap
                .map(c)
                .and_then(|g| metrics.advance_width(g))
                .map_or(0.6 * size, f64::from)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_come_from_the_font() {
        // DejaVu Sans: 'i' is narrower than 'W'; an em is the size.
        let (i, w) = (text_width("i", 10.0), text_width("W", 10.0));
        assert!(i > 1.0 && i < w && w < 12.0, "i {i}, W {w}");
        assert_eq!(text_width("", 10.0), 0.0);
        assert!((text_width("ii", 10.0) - 2.0 * i).abs() < 1e-9);
    }
}
