//! A figure as SVG text: each panel's axes (ranges from its marks with a 5 %
//! margin, as matplotlib's), grid, ticks and labels, its marks clipped to the
//! plot area, its legend, title and axis labels. Images are embedded as PNG
//! data and drawn with nearest-neighbour scaling. Coordinates are written with
//! two decimals, so the text depends on nothing but the figure.

use std::fmt::Write;

use crate::font::{text_width, FAMILY};
use crate::ticks;
use crate::{Figure, Image, Mark, Panel};

/// matplotlib's `tab10`: the colour of the n-th line, scatter or histogram.
const PALETTE: [&str; 10] = [
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
    "#17becf",
];

const TICK_SIZE: f64 = 10.0;
const LABEL_SIZE: f64 = 11.0;
const TITLE_SIZE: f64 = 12.0;
const TICK_LEN: f64 = 4.0;

pub(crate) fn render(fig: &Figure) -> String {
    let (w, h) = (f64::from(fig.width), f64::from(fig.height));
    let mut out = String::new();
    // Writing into a String cannot fail; the results are ignored below.
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"{FAMILY}\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>\n",
    );
    let (rows, cols) = fig.grid_shape();
    let (cw, ch) = (w / cols as f64, h / rows as f64);
    for (i, panel) in fig.panels().iter().enumerate() {
        let cell = Rect {
            x: (i % cols) as f64 * cw,
            y: (i / cols) as f64 * ch,
            w: cw,
            h: ch,
        };
        draw_panel(&mut out, i, panel, cell);
    }
    out.push_str("</svg>\n");
    out
}

#[derive(Clone, Copy, Debug)]
struct Rect {
    x: f64,
    y: f64,
    w: f64,
    h: f64,
}

/// One axis: its limits, scale, direction and ticks with their labels.
struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    /// Values grow downwards (an image's rows).
    down: bool,
    ticks: Vec<(f64, String)>,
}

impl Axis {
    fn t(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }

    /// Where `v` falls along `[0, 1]` of the axis.
    fn frac(&self, v: f64) -> f64 {
        let (a, b) = (self.t(self.lo), self.t(self.hi));
        let f = (self.t(v) - a) / (b - a);
        if self.down {
            1.0 - f
        } else {
            f
        }
    }

    /// `pixels`: an image's axis, ticked at whole pixels.
    fn build(lo: f64, hi: f64, log: bool, down: bool, pixels: bool) -> Axis {
        let ticks = if log {
            ticks::log(lo, hi)
                .into_iter()
                .map(|v| (v, ticks::log_label(v)))
                .collect()
        } else {
            let (t, step) = ticks::linear(lo, hi, 6, if pixels { 1.0 } else { 0.0 });
            t.into_iter().map(|v| (v, ticks::label(v, step))).collect()
        };
        Axis {
            lo,
            hi,
            log,
            down,
            ticks,
        }
    }
}

/// The smallest and largest of some values (`None` for none).
#[derive(Clone, Copy, Default)]
struct Extent(Option<(f64, f64)>);

impl Extent {
    fn add(&mut self, v: f64) {
        self.0 = Some(match self.0 {
            None => (v, v),
            Some((a, b)) => (a.min(v), b.max(v)),
        });
    }

    /// The limits with a 5 % margin each side (in log space on a log axis);
    /// `sticky_zero` keeps a lower limit of 0 (histogram bars stand on it).
    fn limits(self, log: bool, sticky_zero: bool, margin: bool) -> (f64, f64) {
        let default = if log { (1.0, 10.0) } else { (0.0, 1.0) };
        let Some((a, b)) = self.0 else {
            return default;
        };
        let (ta, tb) = if log { (a.log10(), b.log10()) } else { (a, b) };
        let (ta, tb) = if ta == tb {
            let d = if ta == 0.0 { 0.5 } else { ta.abs() * 0.05 };
            (ta - d, tb + d)
        } else if margin {
            let m = (tb - ta) * 0.05;
            let lo = if sticky_zero && !log && ta == 0.0 {
                0.0
            } else {
                ta - m
            };
            (lo, tb + m)
        } else {
            (ta, tb)
        };
        let (lo, hi) = if log {
            (10f64.powf(ta), 10f64.powf(tb))
        } else {
            (ta, tb)
        };
        if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else {
            default
        }
    }
}

fn draw_panel(out: &mut String, index: usize, p: &Panel, cell: Rect) {
    let log = p.log_y;
    let shown = |y: f64| y.is_finite() && (!log || y > 0.0);
    let (mut xs, mut ys) = (Extent::default(), Extent::default());
    let mut image: Option<&Image> = None;
    let mut has_hist = false;
    for m in &p.marks {
        match m {
            Mark::Line { x, y, .. } | Mark::Scatter { x, y, .. } => {
                for (&a, &b) in x.iter().zip(y) {
                    if a.is_finite() && shown(b) {
                        xs.add(a);
                        ys.add(b);
                    }
                }
            }
            Mark::Hist { edges, counts, .. } => {
                has_hist = true;
                if let (Some(&a), Some(&b)) = (edges.first(), edges.last()) {
                    xs.add(a);
                    xs.add(b);
                }
                if !log {
                    ys.add(0.0);
                }
                for &c in counts.iter().filter(|&&c| shown(c as f64)) {
                    ys.add(c as f64);
                }
            }
            Mark::Image(im) => {
                image.get_or_insert(im);
                xs.add(-0.5);
                xs.add(im.width as f64 - 0.5);
                ys.add(-0.5);
                ys.add(im.height as f64 - 0.5);
            }
        }
    }
    let only_images = image.is_some() && p.marks.iter().all(|m| matches!(m, Mark::Image(_)));
    let (xlo, xhi) = xs.limits(false, false, !only_images);
    let (ylo, yhi) = ys.limits(log && image.is_none(), has_hist, !only_images);
    let x = Axis::build(xlo, xhi, false, false, image.is_some());
    let y = Axis::build(ylo, yhi, log && image.is_none(), image.is_some(), image.is_some());

    // The plot area inside the cell, leaving room for the text around it.
    let ytick_w = y
        .ticks
        .iter()
        .map(|(_, s)| text_width(s, TICK_SIZE))
        .fold(0.0, f64::max);
    let left = cell.x
        + 8.0
        + if p.ylabel.is_empty() {
            0.0
        } else {
            LABEL_SIZE + 6.0
        }
        + ytick_w
        + TICK_LEN
        + 3.0;
    let right = cell.x + cell.w - 14.0;
    let top = cell.y
        + if p.title.is_empty() {
            10.0
        } else {
            TITLE_SIZE + 14.0
        };
    let bottom = cell.y + cell.h
        - 6.0
        - TICK_LEN
        - TICK_SIZE
        - 4.0
        - if p.xlabel.is_empty() {
            0.0
        } else {
            LABEL_SIZE + 6.0
        };
    let mut area = Rect {
        x: left,
        y: top,
        w: (right - left).max(1.0),
        h: (bottom - top).max(1.0),
    };
    if image.is_some() {
        // Square pixels: the area shrinks to the image's aspect, centred.
        let aspect = (xhi - xlo) / (yhi - ylo);
        if area.w / area.h > aspect {
            let w = area.h * aspect;
            area.x += (area.w - w) / 2.0;
            area.w = w;
        } else {
            let h = area.w / aspect;
            area.y += (area.h - h) / 2.0;
            area.h = h;
        }
    }
    let sx = |v: f64| area.x + x.frac(v) * area.w;
    let sy = |v: f64| area.y + area.h - y.frac(v) * area.h;

    let _ = writeln!(out, "<g id=\"panel{index}\">");
    let _ = writeln!(
        out,
        "<defs><clipPath id=\"clip{index}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath></defs>",
        n(area.x),
        n(area.y),
        n(area.w),
        n(area.h)
    );
    if image.is_none() {
        let mut grid = String::new();
        for (v, _) in &x.ticks {
            let _ = write!(grid, "M{} {}V{}", n(sx(*v)), n(area.y), n(area.y + area.h));
        }
        for (v, _) in &y.ticks {
            let _ = write!(grid, "M{} {}H{}", n(area.x), n(sy(*v)), n(area.x + area.w));
        }
        let _ = writeln!(
            out,
            "<path d=\"{grid}\" stroke=\"#e6e6e6\" stroke-width=\"1\" fill=\"none\"/>"
        );
    }

    let _ = writeln!(out, "<g clip-path=\"url(#clip{index})\">");
    let mut colour = 0usize;
    let mut legend: Vec<(&Mark, &str)> = Vec::new();
    // Where the data lies on the page, for placing the legend.
    let mut drawn: Vec<(f64, f64)> = Vec::new();
    for m in &p.marks {
        let c = PALETTE[colour % PALETTE.len()];
        match m {
            Mark::Line { x: xv, y: yv, .. } => {
                colour += 1;
                let mut d = String::new();
                let mut pen_down = false;
                for (&a, &b) in xv.iter().zip(yv) {
                    if a.is_finite() && shown(b) {
                        drawn.push((sx(a), sy(b)));
                        let _ = write!(d, "{}{} {}", if pen_down { "L" } else { "M" }, n(sx(a)), n(sy(b)));
                        pen_down = true;
                    } else {
                        pen_down = false;
                    }
                }
                let _ = writeln!(
                    out,
                    "<path d=\"{d}\" stroke=\"{c}\" stroke-width=\"1.5\" stroke-linejoin=\"round\" stroke-linecap=\"round\" fill=\"none\"/>"
                );
                legend.push((m, c));
            }
            Mark::Scatter { x: xv, y: yv, .. } => {
                colour += 1;
                let _ = writeln!(out, "<g fill=\"{c}\">");
                for (&a, &b) in xv.iter().zip(yv) {
                    if a.is_finite() && shown(b) {
                        drawn.push((sx(a), sy(b)));
                        let _ = writeln!(out, "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\"/>", n(sx(a)), n(sy(b)));
                    }
                }
                out.push_str("</g>\n");
                legend.push((m, c));
            }
            Mark::Hist { edges, counts, .. } => {
                colour += 1;
                let _ = writeln!(
                    out,
                    "<g fill=\"{c}\" fill-opacity=\"0.8\" stroke=\"#ffffff\" stroke-width=\"0.5\">"
                );
                let base = if log { area.y + area.h } else { sy(0.0) };
                for (k, &cnt) in counts.iter().enumerate() {
                    if cnt == 0 {
                        continue;
                    }
                    let (x0, x1) = (sx(edges[k]), sx(edges[k + 1]));
                    let top = sy(cnt as f64);
                    drawn.push(((x0 + x1) / 2.0, top));
                    let _ = writeln!(
                        out,
                        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                        n(x0),
                        n(top),
                        n(x1 - x0),
                        n(base - top)
                    );
                }
                out.push_str("</g>\n");
                legend.push((m, c));
            }
            Mark::Image(im) => {
                let (x0, x1) = (sx(-0.5), sx(im.width as f64 - 0.5));
                let (y0, y1) = (sy(-0.5), sy(im.height as f64 - 0.5));
                let _ = writeln!(
                    out,
                    "<image x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" preserveAspectRatio=\"none\" \
                     image-rendering=\"optimizeSpeed\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{}\"/>",
                    n(x0.min(x1)),
                    n(y0.min(y1)),
                    n((x1 - x0).abs()),
                    n((y1 - y0).abs()),
                    base64(&image_png(im))
                );
            }
        }
    }
    out.push_str("</g>\n");

    // Frame, ticks and tick labels.
    let _ = writeln!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#000000\" stroke-width=\"1\"/>",
        n(area.x),
        n(area.y),
        n(area.w),
        n(area.h)
    );
    let mut marks = String::new();
    let mut labels = String::new();
    let base = area.y + area.h;
    for (v, s) in &x.ticks {
        let px = sx(*v);
        let _ = write!(marks, "M{} {}V{}", n(px), n(base), n(base + TICK_LEN));
        let _ = writeln!(
            labels,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            n(px),
            n(base + TICK_LEN + TICK_SIZE + 1.0),
            escape(s)
        );
    }
    for (v, s) in &y.ticks {
        let py = sy(*v);
        let _ = write!(marks, "M{} {}H{}", n(area.x - TICK_LEN), n(py), n(area.x));
        let _ = writeln!(
            labels,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            n(area.x - TICK_LEN - 2.0),
            n(py + TICK_SIZE * 0.35),
            escape(s)
        );
    }
    let _ = writeln!(
        out,
        "<path d=\"{marks}\" stroke=\"#000000\" stroke-width=\"1\" fill=\"none\"/>"
    );
    let _ = write!(
        out,
        "<g font-size=\"{TICK_SIZE}\" fill=\"#000000\">\n{labels}</g>\n"
    );

    let mid_x = area.x + area.w / 2.0;
    if !p.title.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{TITLE_SIZE}\" text-anchor=\"middle\">{}</text>",
            n(mid_x),
            n(area.y - 8.0),
            escape(&p.title)
        );
    }
    if !p.xlabel.is_empty() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{LABEL_SIZE}\" text-anchor=\"middle\">{}</text>",
            n(mid_x),
            n(base + TICK_LEN + TICK_SIZE + 4.0 + LABEL_SIZE + 2.0),
            escape(&p.xlabel)
        );
    }
    if !p.ylabel.is_empty() {
        let _ = writeln!(
            out,
            "<text transform=\"translate({} {}) rotate(-90)\" font-size=\"{LABEL_SIZE}\" text-anchor=\"middle\">{}</text>",
            n(cell.x + 8.0 + LABEL_SIZE),
            n(area.y + area.h / 2.0),
            escape(&p.ylabel)
        );
    }
    if p.legend {
        draw_legend(out, &legend, area, &drawn);
    }
    out.push_str("</g>\n");
}

/// The legend: a swatch and the label of each labelled mark, in the corner
/// of the plot area that covers the fewest drawn points (matplotlib's
/// `loc="best"`; ties go to upper right, upper left, lower left, lower
/// right, in that order).
fn draw_legend(out: &mut String, entries: &[(&Mark, &str)], area: Rect, drawn: &[(f64, f64)]) {
    let entries: Vec<_> = entries.iter().filter(|(m, _)| !m.label().is_empty()).collect();
    if entries.is_empty() {
        return;
    }
    let text_w = entries
        .iter()
        .map(|(m, _)| text_width(m.label(), TICK_SIZE))
        .fold(0.0, f64::max);
    let (pad, row, swatch) = (6.0, 15.0, 18.0);
    let w = pad + swatch + 6.0 + text_w + pad;
    let h = pad * 2.0 + row * entries.len() as f64 - 3.0;
    let (left, right) = (area.x + 6.0, area.x + area.w - w - 6.0);
    let (upper, lower) = (area.y + 6.0, area.y + area.h - h - 6.0);
    let covered = |x: f64, y: f64| {
        drawn
            .iter()
            .filter(|(px, py)| *px >= x - 3.0 && *px <= x + w + 3.0 && *py >= y - 3.0 && *py <= y + h + 3.0)
            .count()
    };
    let corners = [(right, upper), (left, upper), (left, lower), (right, lower)];
    let (mut x, mut y) = corners[0];
    let mut best = usize::MAX;
    for (cx, cy) in corners {
        let c = covered(cx, cy);
        if c < best {
            (best, x, y) = (c, cx, cy);
        }
    }
    let _ = writeln!(
        out,
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#ffffff\" fill-opacity=\"0.85\" stroke=\"#cccccc\" stroke-width=\"1\"/>",
        n(x),
        n(y),
        n(w),
        n(h)
    );
    for (k, (m, c)) in entries.iter().enumerate() {
        let cy = y + pad + row * k as f64 + row / 2.0 - 1.5;
        let (sx0, sx1) = (x + pad, x + pad + swatch);
        match m {
            Mark::Line { .. } => {
                let _ = writeln!(
                    out,
                    "<path d=\"M{} {}H{}\" stroke=\"{c}\" stroke-width=\"1.5\"/>",
                    n(sx0),
                    n(cy),
                    n(sx1)
                );
            }
            Mark::Scatter { .. } => {
                let _ = writeln!(
                    out,
                    "<circle cx=\"{}\" cy=\"{}\" r=\"2.5\" fill=\"{c}\"/>",
                    n((sx0 + sx1) / 2.0),
                    n(cy)
                );
            }
            Mark::Hist { .. } | Mark::Image(_) => {
                let _ = writeln!(
                    out,
                    "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"8\" fill=\"{c}\" fill-opacity=\"0.8\"/>",
                    n(sx0 + 3.0),
                    n(cy - 4.0),
                    n(swatch - 6.0)
                );
            }
        }
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{TICK_SIZE}\">{}</text>",
            n(sx1 + 6.0),
            n(cy + TICK_SIZE * 0.35),
            escape(m.label())
        );
    }
}

/// A coordinate with two decimals (and no `-0.00`); far-off values are
/// clamped so a point outside the plot stays a small number.
fn n(v: f64) -> String {
    let v = if v.is_finite() { v.clamp(-1e6, 1e6) } else { 0.0 };
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" || s.is_empty() {
        "0".to_owned()
    } else {
        s.to_owned()
    }
}

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // XML 1.0 has no other control characters.
            c if c.is_control() && !matches!(c, '\t' | '\n' | '\r') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// An image's pixels as a PNG file (grey or RGB, 8 bits).
fn image_png(im: &Image) -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut enc = png::Encoder::new(&mut bytes, im.width as u32, im.height as u32);
    enc.set_color(if im.rgb {
        png::ColorType::Rgb
    } else {
        png::ColorType::Grayscale
    });
    enc.set_depth(png::BitDepth::Eight);
    // The image's size was checked when it was made; an encoder error leaves
    // an empty (undrawn) image rather than failing the figure.
    let ok = enc
        .write_header()
        .and_then(|mut w| w.write_image_data(&im.pixels).and_then(|()| w.finish()));
    if ok.is_err() {
        return Vec::new();
    }
    bytes
}

/// `bytes` in standard base64 (RFC 4648, with padding): for data URIs and
/// for notebooks' `image/png` outputs.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let v = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(char::from(ALPHABET[((v >> (18 - 6 * k)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn coordinates_are_short_and_never_negative_zero() {
        assert_eq!(n(-0.001), "0");
        assert_eq!(n(12.5), "12.5");
        assert_eq!(n(3.0), "3");
        assert_eq!(n(f64::NAN), "0");
        assert_eq!(n(1e300), "1000000");
    }

    #[test]
    fn lines_break_at_non_finite_points_and_log_drops_non_positive() {
        let mut f = Figure::new(200, 100).unwrap();
        f.line(
            vec![0.0, 1.0, 2.0, 3.0],
            vec![1.0, f64::NAN, 2.0, 3.0],
            String::new(),
        )
        .unwrap();
        let s = f.svg();
        let d = s.lines().find(|l| l.contains("stroke-width=\"1.5\"")).unwrap();
        assert_eq!(d.matches('M').count(), 2, "{d}");
        f.log_y();
        f.line(vec![0.0, 1.0], vec![-1.0, 0.0], String::new()).unwrap();
        assert!(f.svg().contains("<path d=\"\""));
    }

    #[test]
    fn images_keep_square_pixels() {
        let mut f = Figure::new(400, 200).unwrap();
        f.image(Image::grey(2, 4, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]).unwrap());
        let s = f.svg();
        let line = s.lines().find(|l| l.starts_with("<image")).unwrap();
        let attr = |name: &str| -> f64 {
            let start = line.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
            line[start..].split('"').next().unwrap().parse().unwrap()
        };
        let (w, h) = (attr("width"), attr("height"));
        assert!((w / h - 2.0).abs() < 0.02, "{w}×{h}");
    }
}
