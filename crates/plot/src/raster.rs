//! SVG to PNG: resvg renders the figure's SVG onto a white pixmap with a font
//! database holding only the bundled font, and tiny-skia encodes it. Nothing
//! here depends on the machine (no system fonts, no clock, no thread count),
//! so a figure's PNG is the same bytes on every run.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg;

use crate::font;

fn fontdb() -> Arc<usvg::fontdb::Database> {
    static DB: OnceLock<Arc<usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = usvg::fontdb::Database::new();
        db.load_font_data(font::DEJAVU_SANS.to_vec());
        db.set_sans_serif_family(font::FAMILY);
        Arc::new(db)
    })
    .clone()
}

/// The PNG of an SVG document of `width × height` pixels.
pub(crate) fn png(svg: &str, width: u32, height: u32) -> Result<Vec<u8>, String> {
    let opt = usvg::Options {
        font_family: font::FAMILY.to_owned(),
        fontdb: fontdb(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| format!("the figure's SVG did not parse: {e}"))?;
    let mut pixmap =
        Pixmap::new(width, height).ok_or_else(|| format!("no memory for a {width}×{height} image"))?;
    pixmap.fill(Color::WHITE);
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    pixmap
        .encode_png()
        .map_err(|e| format!("the figure's PNG could not be encoded: {e}"))
}
