//! A report looked at, not just generated: headless Chromium renders the HTML to a PNG and the
//! picture is searched for the chart's own colours. A chart that does not draw (broken SVG,
//! CSS that no longer reaches it) has none of them, so the check fails.
#![allow(dead_code, reason = "each test binary uses part of this file")]

use std::path::Path;
use std::process::Command;

/// The chart's colours in `src/report/html.rs`, light and dark: the lag line and the dashed
/// routing threshold.
pub const LIGHT_LAG: [u8; 3] = [0x1c, 0x64, 0xd6];
pub const LIGHT_THRESHOLD: [u8; 3] = [0xd9, 0x48, 0x0f];
pub const DARK_LAG: [u8; 3] = [0x5a, 0xa2, 0xff];
pub const DARK_THRESHOLD: [u8; 3] = [0xff, 0x8c, 0x42];

/// Renders `html` to `png` at 900 px wide; `dark` asks for `prefers-color-scheme: dark`.
/// Chromium missing is a failure, never a skip: scripts/test installs it.
pub fn screenshot(html: &Path, png: &Path, dark: bool) {
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "chromium".to_owned());
    let mut cmd = Command::new(&chromium);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--window-size=900,2400",
    ]);
    if dark {
        cmd.arg("--force-dark-mode");
    }
    cmd.arg(format!("--screenshot={}", png.display()));
    cmd.arg(format!("file://{}", html.display()));
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "cannot run {chromium} ({e}): the report test needs headless Chromium; install it \
             (Debian: apt-get install chromium, or run scripts/test, which does)"
        )
    });
    assert!(
        out.status.success() && png.exists(),
        "{chromium} did not render {}: {}",
        html.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The picture's pixels as RGB.
pub struct Picture {
    pub width: usize,
    pub height: usize,
    pub rgb: Vec<[u8; 3]>,
}

pub fn read_png(path: &Path) -> Picture {
    let file = std::fs::File::open(path).unwrap();
    let mut decoder = png::Decoder::new(file);
    decoder.set_transformations(png::Transformations::normalize_to_color8());
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|p| match p {
            [g] | [g, _] => [*g, *g, *g],
            [r, g, b, ..] => [*r, *g, *b],
            _ => [0, 0, 0],
        })
        .collect();
    Picture {
        width: info.width as usize,
        height: info.height as usize,
        rgb,
    }
}

impl Picture {
    /// Pixels within `tolerance` of `colour` on every channel.
    pub fn count(&self, colour: [u8; 3], tolerance: u8) -> usize {
        self.rgb
            .iter()
            .filter(|p| (0..3).all(|i| p[i].abs_diff(colour[i]) <= tolerance))
            .count()
    }

    /// The rows that hold at least `min` pixels of `colour`: where a chart's line is drawn.
    pub fn rows_with(&self, colour: [u8; 3], tolerance: u8, min: usize) -> Vec<usize> {
        (0..self.height)
            .filter(|y| {
                self.rgb[y * self.width..(y + 1) * self.width]
                    .iter()
                    .filter(|p| (0..3).all(|i| p[i].abs_diff(colour[i]) <= tolerance))
                    .count()
                    >= min
            })
            .collect()
    }
}

/// Renders `html` in light and dark and checks each chart was drawn: `charts` lag lines (each
/// at least a few dozen pixels of the lag colour) and a dashed threshold across each.
pub fn assert_charts_drawn(html: &Path, charts: usize) {
    for (dark, lag, threshold) in [
        (false, LIGHT_LAG, LIGHT_THRESHOLD),
        (true, DARK_LAG, DARK_THRESHOLD),
    ] {
        let png = html.with_extension(if dark { "dark.png" } else { "light.png" });
        screenshot(html, &png, dark);
        let picture = read_png(&png);
        let lag_pixels = picture.count(lag, 24);
        let threshold_rows = picture.rows_with(threshold, 24, 200);
        eprintln!(
            "{} ({}): {lag_pixels} lag-coloured pixels, threshold lines on rows {threshold_rows:?}",
            png.display(),
            if dark { "dark" } else { "light" }
        );
        assert!(
            lag_pixels >= 60 * charts,
            "{}: only {lag_pixels} pixels of the lag colour {lag:?} for {charts} chart(s): the \
             lag lines were not drawn",
            png.display()
        );
        // A dashed line across the plot: rows with hundreds of threshold pixels, one band per
        // chart (a line is 2-3 rows thick).
        let bands = threshold_rows
            .iter()
            .zip(threshold_rows.iter().skip(1))
            .filter(|(a, b)| **b > **a + 1)
            .count()
            + usize::from(!threshold_rows.is_empty());
        assert!(
            bands >= charts,
            "{}: {bands} threshold line(s) drawn for {charts} chart(s)",
            png.display()
        );
    }
}
