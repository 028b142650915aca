//! Figures (spec §12.3, issue 15 acceptance 2): a program that draws every
//! kind of mark on a grid of panels saves its figure as SVG and PNG twice;
//! each format's two files are the same bytes, under both engines and with
//! one and four threads, and both engines write the same bytes. The PNG is
//! decoded: it has the figure's size and the first line's colour
//! (matplotlib's blue, #1f77b4) is drawn where the curve runs.

// Test code writes fixtures and runs the binary: the core crates' IO rule
// (clippy.toml) is for the interpreter, not its tests.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]
// A failing test should stop with the value it was given, so tests unwrap.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

const PROGRAM: &str = r#"
let x = linspace(0, 6.283185307179586, 200)
let fig = figure(width=400, height=300)
fig.grid(2, 2)
fig.line(x, sin(x), label="sin")
fig.scatter(x.to(bf16), cos(x).to(bf16), label="cos")
fig.title("waves & <marks>")
fig.xlabel("x")
fig.ylabel("y")
fig.legend()
fig.panel(1)
fig.line([1, 2, 3, 4], [10.0, 1.0, 0.1, 0.01])
fig.log_y()
fig.panel(2)
fig.hist(randn([500], seed=3), bins=25)
fig.panel(3)
fig.image(reshape(arange(0, 12).to(f32), [3, 4]))
print(fig)
for path in [args()[0] + "/a.svg", args()[0] + "/b.svg", args()[0] + "/a.png", args()[0] + "/b.png"] {
    print(fig.save(path))
}
"#;

/// Runs the program writing into `dir`; returns the SVG and PNG bytes.
fn run(dir: &Path, engine: &str, threads: &str) -> (Vec<u8>, Vec<u8>) {
    let src = dir.join("fig.tw");
    std::fs::write(&src, PROGRAM).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_twill"))
        .args([
            "run",
            &format!("--engine={engine}"),
            src.to_str().unwrap(),
            dir.to_str().unwrap(),
        ])
        .env("RAYON_NUM_THREADS", threads)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "Figure(400×300, 4 panels, 5 marks)\nOk(())\nOk(())\nOk(())\nOk(())\n"
    );
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let (svg, png) = (read("a.svg"), read("a.png"));
    assert_eq!(svg, read("b.svg"), "two saves of one figure differ (SVG)");
    assert_eq!(png, read("b.png"), "two saves of one figure differ (PNG)");
    (svg, png)
}

#[test]
fn saved_figures_are_byte_identical_and_show_the_curve() {
    let tmp = std::env::temp_dir().join(format!("twill-figures-{}", std::process::id()));
    let mut results = Vec::new();
    for (k, (engine, threads)) in [("compiled", "1"), ("tree", "1"), ("compiled", "4")]
        .iter()
        .enumerate()
    {
        let dir = tmp.join(k.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        results.push(run(&dir, engine, threads));
    }
    assert!(
        results.windows(2).all(|w| w[0] == w[1]),
        "the engines or thread counts wrote different bytes"
    );
    let (svg, png) = &results[0];

    let svg = String::from_utf8(svg.clone()).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"300\""));
    assert!(svg.contains("waves &amp; &lt;marks&gt;"), "the title is escaped");
    assert_eq!(svg.matches("<g id=\"panel").count(), 4);
    assert!(svg.contains("data:image/png;base64,"), "the image is embedded");

    let decoder = png::Decoder::new(std::io::Cursor::new(png.clone()));
    let mut reader = decoder.read_info().unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!((info.width, info.height), (400, 300));
    assert_eq!(info.color_type, png::ColorType::Rgba);
    let at = |x: u32, y: u32| {
        let i = ((y * info.width + x) * 4) as usize;
        [pixels[i], pixels[i + 1], pixels[i + 2]]
    };
    let blue = |p: [u8; 3]| p[2] > 150 && p[0] < 90 && p[1] > 90 && p[1] < 150;
    // The sine's blue pixels in the first panel (the top-left quarter):
    // many of them, spread over its width, and none in the others' cells
    // but the log panel's line (top right) and the histogram's bars.
    let mut columns = std::collections::BTreeSet::new();
    for y in 0..150 {
        for x in 0..200 {
            if blue(at(x, y)) {
                columns.insert(x);
            }
        }
    }
    assert!(
        columns.len() > 100,
        "the curve covers {} columns of its panel",
        columns.len()
    );
    let white = (0..info.width).filter(|&x| at(x, 2) == [255, 255, 255]).count();
    assert_eq!(white, info.width as usize, "the background is white");
    std::fs::remove_dir_all(&tmp).ok();
}
