//! Figures (spec §12.3): the data a twill `figure()` holds — its size, its
//! grid of panels and each panel's marks, labels and scales — and its
//! rendering. A figure is drawn once as SVG text by [`svg`]; its PNG is that
//! SVG rasterised by resvg with the bundled DejaVu Sans ([`font`]), so the two
//! formats show the same picture and neither looks up a system font. Every
//! number in the output is formatted by this crate and every rendering step is
//! deterministic, so the same figure gives the same bytes on every run.
//!
//! The crate knows nothing of twill values: the evaluator converts tensors and
//! Arrs to `f64` slices and calls the methods here, whose errors are plain
//! messages for it to attach a span to.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

mod font;
mod raster;
mod svg;
mod ticks;

pub use svg::base64;

use std::fmt;

/// The largest width or height of a figure, in pixels.
pub const MAX_SIDE: i64 = 8192;
/// The most rows or columns of panels.
pub const MAX_GRID: i64 = 16;
/// The most histogram bins.
pub const MAX_BINS: i64 = 100_000;
/// The most points (or image pixels) one mark may hold.
pub const MAX_POINTS: usize = 1 << 22;

/// A figure: a size and a grid of panels, one of them current (the one the
/// drawing methods add to).
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    width: u32,
    height: u32,
    rows: usize,
    cols: usize,
    panels: Vec<Panel>,
    current: usize,
}

/// One panel: its marks in the order they were added, and its labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Panel {
    pub(crate) marks: Vec<Mark>,
    pub(crate) title: String,
    pub(crate) xlabel: String,
    pub(crate) ylabel: String,
    pub(crate) log_y: bool,
    pub(crate) legend: bool,
}

/// Something drawn in a panel.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Mark {
    Line {
        x: Vec<f64>,
        y: Vec<f64>,
        label: String,
    },
    Scatter {
        x: Vec<f64>,
        y: Vec<f64>,
        label: String,
    },
    /// Bin edges (`counts.len() + 1` of them) and counts.
    Hist {
        edges: Vec<f64>,
        counts: Vec<u64>,
        label: String,
    },
    Image(Image),
}

impl Mark {
    pub(crate) fn label(&self) -> &str {
        match self {
            Mark::Line { label, .. } | Mark::Scatter { label, .. } | Mark::Hist { label, .. } => label,
            Mark::Image(_) => "",
        }
    }
}

/// An image as 8-bit pixels, row-major from the top row: one byte per pixel
/// (grey) or three (RGB).
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub(crate) height: usize,
    pub(crate) width: usize,
    pub(crate) rgb: bool,
    pub(crate) pixels: Vec<u8>,
}

impl Image {
    /// A grey-scale image of `height × width` values: the smallest finite
    /// value is black and the largest white, linearly between (as
    /// matplotlib's `imshow(cmap="gray")`); NaN and ±inf are drawn as the
    /// ends they are nearest (NaN black). A constant image is mid grey.
    pub fn grey(height: usize, width: usize, values: &[f64]) -> Result<Image, String> {
        check_image(height, width, 1, values.len())?;
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let lo = finite.clone().fold(f64::INFINITY, f64::min);
        let hi = finite.fold(f64::NEG_INFINITY, f64::max);
        let pixels = values
            .iter()
            .map(|&v| {
                if v.is_nan() {
                    0
                } else if hi <= lo {
                    128
                } else {
                    unit_byte((v - lo) / (hi - lo))
                }
            })
            .collect();
        Ok(Image {
            height,
            width,
            rgb: false,
            pixels,
        })
    }

    /// An RGB image of `height × width × 3` values: integers are 0–255 and
    /// floats 0–1 (as matplotlib's `imshow`), clipped to that range; NaN is 0.
    pub fn rgb(height: usize, width: usize, values: &[f64], integral: bool) -> Result<Image, String> {
        check_image(height, width, 3, values.len())?;
        let scale = if integral { 255.0 } else { 1.0 };
        let pixels = values.iter().map(|&v| unit_byte(v / scale)).collect();
        Ok(Image {
            height,
            width,
            rgb: true,
            pixels,
        })
    }
}

fn check_image(height: usize, width: usize, channels: usize, len: usize) -> Result<(), String> {
    if height == 0 || width == 0 {
        return Err(format!("an image needs at least one pixel, not {height}×{width}"));
    }
    match height.checked_mul(width) {
        Some(n) if n <= MAX_POINTS => {}
        _ => {
            return Err(format!(
                "an image of {height}×{width} pixels is more than {MAX_POINTS}"
            ))
        }
    }
    if height * width * channels != len {
        return Err(format!(
            "an image of {height}×{width}×{channels} needs {} values, not {len}",
            height * width * channels
        ));
    }
    Ok(())
}

/// A value in [0, 1] (clipped; NaN is 0) as a byte, rounded to nearest.
fn unit_byte(v: f64) -> u8 {
    if v.is_nan() {
        0
    } else {
        (v.clamp(0.0, 1.0) * 255.0).round() as u8
    }
}

/// The format `save` writes, from the path's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Svg,
    Png,
}

impl FileFormat {
    /// The format for a path ending in `.svg` or `.png` (any case).
    pub fn of_path(path: &str) -> Result<FileFormat, String> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".svg") {
            Ok(FileFormat::Svg)
        } else if lower.ends_with(".png") {
            Ok(FileFormat::Png)
        } else {
            Err(format!("`save` writes .svg or .png files, not `{path}`"))
        }
    }
}

impl Figure {
    /// A figure of `width × height` pixels with one empty panel.
    pub fn new(width: i64, height: i64) -> Result<Figure, String> {
        for (what, v) in [("width", width), ("height", height)] {
            if !(16..=MAX_SIDE).contains(&v) {
                return Err(format!("a figure's {what} is 16 to {MAX_SIDE} pixels, not {v}"));
            }
        }
        Ok(Figure {
            width: width as u32,
            height: height as u32,
            rows: 1,
            cols: 1,
            panels: vec![Panel::default()],
            current: 0,
        })
    }

    pub fn width(&self) -> u32 {
        self.width
    }

    pub fn height(&self) -> u32 {
        self.height
    }

    /// Splits the figure into `rows × cols` panels, numbered from 0 row by
    /// row; the panels already drawn keep their numbers (and those past the
    /// new count are dropped), and panel 0 becomes current.
    pub fn grid(&mut self, rows: i64, cols: i64) -> Result<(), String> {
        for (what, v) in [("rows", rows), ("cols", cols)] {
            if !(1..=MAX_GRID).contains(&v) {
                return Err(format!("`grid` takes 1 to {MAX_GRID} {what}, not {v}"));
            }
        }
        self.rows = rows as usize;
        self.cols = cols as usize;
        self.panels.resize(self.rows * self.cols, Panel::default());
        self.current = 0;
        Ok(())
    }

    /// Makes panel `i` (from 0, row by row) the one drawn into.
    pub fn panel(&mut self, i: i64) -> Result<(), String> {
        let n = self.panels.len();
        if i < 0 || i as u64 >= n as u64 {
            return Err(format!(
                "panel {i} is out of range: the figure has {n} panel{} (0 to {}); `grid(rows, cols)` makes more",
                if n == 1 { "" } else { "s" },
                n - 1
            ));
        }
        self.current = i as usize;
        Ok(())
    }

    fn cur(&mut self) -> &mut Panel {
        // `current` is always below `panels.len()` (grid and panel keep it so).
        let i = self.current.min(self.panels.len().saturating_sub(1));
        &mut self.panels[i]
    }

    /// A line through the points `(x[i], y[i])`; a non-finite point breaks it.
    pub fn line(&mut self, x: Vec<f64>, y: Vec<f64>, label: String) -> Result<(), String> {
        check_xy("line", &x, &y)?;
        self.cur().marks.push(Mark::Line { x, y, label });
        Ok(())
    }

    /// A dot at each finite point `(x[i], y[i])`.
    pub fn scatter(&mut self, x: Vec<f64>, y: Vec<f64>, label: String) -> Result<(), String> {
        check_xy("scatter", &x, &y)?;
        self.cur().marks.push(Mark::Scatter { x, y, label });
        Ok(())
    }

    /// A histogram of the finite values in `bins` equal bins from their
    /// smallest to their largest (as `numpy.histogram`: each bin holds its
    /// left edge, the last its right edge too).
    pub fn hist(&mut self, values: &[f64], bins: i64, label: String) -> Result<(), String> {
        if !(1..=MAX_BINS).contains(&bins) {
            return Err(format!("`hist` takes 1 to {MAX_BINS} bins, not {bins}"));
        }
        if values.len() > MAX_POINTS {
            return Err(format!(
                "`hist` takes at most {MAX_POINTS} values, not {}",
                values.len()
            ));
        }
        let bins = bins as usize;
        let finite = values.iter().copied().filter(|v| v.is_finite());
        let (mut lo, mut hi) = finite
            .clone()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(v), b.max(v))
            });
        if lo > hi {
            (lo, hi) = (0.0, 1.0);
        } else if lo == hi {
            (lo, hi) = (lo - 0.5, hi + 0.5);
        }
        let width = (hi - lo) / bins as f64;
        let edges: Vec<f64> = (0..=bins)
            .map(|k| if k == bins { hi } else { lo + width * k as f64 })
            .collect();
        let mut counts = vec![0u64; bins];
        for v in finite {
            // The bin by its edges, so a value on an edge is in the bin it
            // starts (rounding in the division could say otherwise).
            let mut k = (((v - lo) / width) as usize).min(bins - 1);
            while k > 0 && v < edges[k] {
                k -= 1;
            }
            while k + 1 < bins && v >= edges[k + 1] {
                k += 1;
            }
            counts[k] += 1;
        }
        self.cur().marks.push(Mark::Hist { edges, counts, label });
        Ok(())
    }

    /// An image, pixel (0, 0) at the top left; the panel's axes count pixels.
    pub fn image(&mut self, image: Image) {
        self.cur().marks.push(Mark::Image(image));
    }

    pub fn title(&mut self, s: String) {
        self.cur().title = s;
    }

    pub fn xlabel(&mut self, s: String) {
        self.cur().xlabel = s;
    }

    pub fn ylabel(&mut self, s: String) {
        self.cur().ylabel = s;
    }

    /// A logarithmic y axis for the current panel (values ≤ 0 are not drawn).
    pub fn log_y(&mut self) {
        self.cur().log_y = true;
    }

    /// A legend of the current panel's labelled marks.
    pub fn legend(&mut self) {
        self.cur().legend = true;
    }

    /// The figure as an SVG document.
    pub fn svg(&self) -> String {
        svg::render(self)
    }

    /// The figure as a PNG image (its SVG, rasterised).
    pub fn png(&self) -> Result<Vec<u8>, String> {
        raster::png(&self.svg(), self.width, self.height)
    }

    /// The bytes of the figure in a file format.
    pub fn encode(&self, format: FileFormat) -> Result<Vec<u8>, String> {
        match format {
            FileFormat::Svg => Ok(self.svg().into_bytes()),
            FileFormat::Png => self.png(),
        }
    }

    pub(crate) fn panels(&self) -> &[Panel] {
        &self.panels
    }

    pub(crate) fn grid_shape(&self) -> (usize, usize) {
        (self.rows, self.cols)
    }
}

fn check_xy(what: &str, x: &[f64], y: &[f64]) -> Result<(), String> {
    if x.len() != y.len() {
        return Err(format!(
            "`{what}` needs as many x as y values, not {} and {}",
            x.len(),
            y.len()
        ));
    }
    if x.len() > MAX_POINTS {
        return Err(format!(
            "`{what}` takes at most {MAX_POINTS} points, not {}",
            x.len()
        ));
    }
    Ok(())
}

/// The one-line summary a figure prints as: `Figure(640×480, 1 panel, 2 marks)`.
impl fmt::Display for Figure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let marks: usize = self.panels.iter().map(|p| p.marks.len()).sum();
        let n = self.panels.len();
        write!(
            f,
            "Figure({}×{}, {n} panel{}, {marks} mark{})",
            self.width,
            self.height,
            if n == 1 { "" } else { "s" },
            if marks == 1 { "" } else { "s" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Figure {
        let mut f = Figure::new(320, 240).unwrap();
        let x: Vec<f64> = (0..50).map(|i| i as f64 / 10.0).collect();
        let y: Vec<f64> = x.iter().map(|v| v.sin()).collect();
        f.line(x.clone(), y, "sin".into()).unwrap();
        f.scatter(x.clone(), x.iter().map(|v| v.cos()).collect(), "cos".into())
            .unwrap();
        f.title("waves & <things>".into());
        f.legend();
        f
    }

    #[test]
    fn the_same_figure_gives_the_same_bytes() {
        let (a, b) = (sample(), sample());
        assert_eq!(a.svg(), b.svg());
        let (pa, pb) = (a.png().unwrap(), b.png().unwrap());
        assert_eq!(pa, pb);
        assert_eq!(&pa[..8], b"\x89PNG\r\n\x1a\n");
        assert!(a.svg().contains("waves &amp; &lt;things&gt;"));
    }

    #[test]
    fn hist_bins_follow_numpy() {
        // numpy.histogram([0, 1, 1, 2, 3, 3, 3], bins=3) → [1, 2, 4], edges 0, 1, 2, 3.
        let mut f = Figure::new(100, 100).unwrap();
        f.hist(&[0.0, 1.0, 1.0, 2.0, 3.0, 3.0, 3.0, f64::NAN], 3, String::new())
            .unwrap();
        let Mark::Hist { edges, counts, .. } = &f.panels[0].marks[0] else {
            panic!("not a histogram: {:?}", f.panels[0].marks[0]);
        };
        assert_eq!(counts, &[1, 2, 4]);
        assert_eq!(edges, &[0.0, 1.0, 2.0, 3.0]);
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(Figure::new(0, 10).is_err());
        assert!(Figure::new(10_000_000, 100).is_err());
        let mut f = Figure::new(100, 100).unwrap();
        assert!(f.line(vec![1.0], vec![], String::new()).is_err());
        assert!(f.hist(&[1.0], 0, String::new()).is_err());
        assert!(f.panel(1).is_err());
        f.grid(2, 2).unwrap();
        f.panel(3).unwrap();
        assert!(f.panel(4).is_err());
        assert!(f.grid(0, 1).is_err());
        assert!(Image::grey(2, 2, &[1.0; 3]).is_err());
        assert!(Image::grey(usize::MAX, 2, &[]).is_err());
        assert!(FileFormat::of_path("x.jpg").is_err());
        assert_eq!(FileFormat::of_path("A.PNG"), Ok(FileFormat::Png));
    }

    #[test]
    fn summary_counts_panels_and_marks() {
        let mut f = sample();
        assert_eq!(f.to_string(), "Figure(320×240, 1 panel, 2 marks)");
        f.grid(1, 2).unwrap();
        assert_eq!(f.to_string(), "Figure(320×240, 2 panels, 2 marks)");
    }

    #[test]
    fn grey_images_span_black_to_white() {
        let im = Image::grey(1, 3, &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(im.pixels, vec![0, 128, 255]);
        let flat = Image::grey(1, 2, &[5.0, 5.0]).unwrap();
        assert_eq!(flat.pixels, vec![128, 128]);
        let rgb = Image::rgb(1, 1, &[300.0, 128.0, -1.0], true).unwrap();
        assert_eq!(rgb.pixels, vec![255, 128, 0]);
    }
}
