//! The roofline chart of `wavejit analyze` (plotters; SVG and PNG): log-log, arithmetic intensity
//! (FLOP/byte) against throughput (FLOP/s); the memory roofs (HBM, L2, vector L1: bandwidth × intensity,
//! up to the compute peak) and the compute roofs (FP32 and FP64 vector, FP16 and FP32 matrix) of the
//! device; every kernel with FLOPs placed three times, at its HBM, L2 and L1 intensity, at its modeled
//! throughput (the markers of one kernel share a colour, the level is the marker's shape; kernels are tagged
//! K1, K2… in the order of `wavejit analyze`'s table, longest first, and the legend names them). Kernels
//! without a place (no FLOPs) are named under the chart as left off.
//!
//! Text is drawn with a system TrueType font (DejaVu Sans or Liberation Sans, Debian's `fonts-dejavu-core`).

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::analyze::Analysis;

const FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation2/LiberationSans-Regular.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
];

fn register_font() -> Result<(), String> {
    static DONE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    DONE.get_or_init(|| {
        let bytes = FONTS.iter().find_map(|p| std::fs::read(p).ok()).ok_or_else(|| {
            format!(
                "no TrueType font for the chart's text (looked for {}); install fonts-dejavu-core",
                FONTS.join(", ")
            )
        })?;
        plotters::style::register_font("sans-serif", FontStyle::Normal, Box::leak(bytes.into_boxed_slice()))
            .map_err(|_| "the chart's font cannot be read".to_string())
    })
    .clone()
}

/// `s` cut to `n` characters, `…` marking a cut.
fn clip(s: &str, n: usize) -> String {
    if s.chars().count() > n {
        s.chars().take(n).collect::<String>() + "…"
    } else {
        s.to_string()
    }
}

const PALETTE: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(255, 127, 14),
    RGBColor(23, 190, 207),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
];

fn chart<DB: DrawingBackend>(a: &Analysis, root: DrawingArea<DB, Shift>) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let p = &a.peaks;
    let top = [p.fp64_vector, p.fp32_vector, p.fp32_matrix, p.fp16_matrix]
        .into_iter()
        .fold(0.0, f64::max);
    let points: Vec<(usize, &str, f64, [Option<f64>; 3])> = a
        .kernels
        .iter()
        .enumerate()
        .filter_map(|(rank, k)| {
            let m = |n: &str| k.metrics.get(n).copied().flatten().filter(|v| *v > 0.0);
            let rate = m("flops_per_second")?;
            Some((rank, k.name.as_str(), rate, [m("ai_hbm"), m("ai_l2"), m("ai_l1")]))
        })
        .collect();
    // names of one library share long prefixes (namespaces, templates): the legend shows what follows them
    let common = match points.as_slice() {
        [_, _, ..] => {
            let shared = |a: &str, b: &str| {
                a.char_indices()
                    .zip(b.chars())
                    .take_while(|((_, x), y)| x == y)
                    .last()
                    .map_or(0, |((i, x), _)| i + x.len_utf8())
            };
            points
                .iter()
                .map(|p| p.1)
                .reduce(|a, b| &a[..shared(a, b)])
                .map_or(0, str::len)
        }
        _ => 0,
    };
    let lowest = points.iter().map(|p| p.2).fold(top, f64::min);
    let (y0, y1) = ((lowest / 10.0).min(1e9), top * 3.0);
    let ai_lo = points
        .iter()
        .flat_map(|p| p.3.iter().flatten().copied())
        .fold(0.01, f64::min)
        / 3.0;
    let ai_hi = points
        .iter()
        .flat_map(|p| p.3.iter().flatten().copied())
        .fold(1000.0, f64::max)
        * 3.0;
    let mut c = ChartBuilder::on(&root)
        .caption(format!("Roofline: {} (modeled)", a.device), ("sans-serif", 28))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(90)
        .build_cartesian_2d((ai_lo..ai_hi).log_scale(), (y0..y1).log_scale())?;
    c.configure_mesh()
        .x_desc("Arithmetic intensity (FLOP / byte)")
        .y_desc("Throughput (FLOP/s)")
        .y_label_formatter(&|v| format!("{:.0e}", v))
        .x_label_formatter(&|v| {
            if *v >= 1.0 {
                format!("{v:.0}")
            } else {
                format!("{v:.2}")
            }
        })
        .label_style(("sans-serif", 16))
        .axis_desc_style(("sans-serif", 18))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    let xs: Vec<f64> = (0..=200)
        .map(|i| ai_lo * (ai_hi / ai_lo).powf(i as f64 / 200.0))
        .collect();
    let grey = RGBColor(90, 90, 90);
    for (name, bw, style) in [
        ("HBM", p.hbm, grey.stroke_width(3)),
        ("L2", p.l2, RGBColor(130, 130, 130).stroke_width(2)),
        ("vL1D", p.l1, RGBColor(170, 170, 170).stroke_width(2)),
    ] {
        if bw <= 0.0 {
            continue;
        }
        let line: Vec<(f64, f64)> = xs.iter().map(|&x| (x, (x * bw).min(top))).collect();
        c.draw_series(LineSeries::new(line, style))?
            .label(format!("{name} {:.0} GB/s", bw / 1e9))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    // roofs of equal height share one line and one label (MI210: FP32 and FP64 vector)
    let mut roofs: Vec<(String, f64, RGBColor)> = Vec::new();
    for (name, peak, color) in [
        ("FP16 matrix", p.fp16_matrix, RGBColor(0, 100, 0)),
        ("FP32 matrix", p.fp32_matrix, RGBColor(0, 0, 160)),
        ("FP32 vector", p.fp32_vector, RGBColor(170, 0, 0)),
        ("FP64 vector", p.fp64_vector, RGBColor(200, 120, 0)),
    ] {
        match roofs.iter_mut().find(|r| (r.1 - peak).abs() < 1e-6 * peak) {
            Some(r) => r.0 = format!("{} = {name}", r.0),
            None => roofs.push((name.to_string(), peak, color)),
        }
    }
    for (name, peak, color) in roofs {
        let knee = [p.hbm, p.l2, p.l1]
            .into_iter()
            .fold(f64::MAX, |m, b| if b > 0.0 { m.min(peak / b) } else { m })
            .max(ai_lo);
        let style = color.stroke_width(2);
        c.draw_series(DashedLineSeries::new(vec![(knee, peak), (ai_hi, peak)], 10, 6, style))?
            .label(format!("{name} {:.1} TFLOP/s", peak / 1e12))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], style));
    }
    for (i, (rank, name, rate, ais)) in points.iter().enumerate() {
        let color = PALETTE[i % PALETTE.len()];
        let short = if common > 8 { "…".to_string() } else { String::new() }
            + &clip(&name[if common > 8 { common } else { 0 }..], 44);
        let tag = format!("K{}", rank + 1);
        let [hbm, l2, l1] = *ais;
        if let Some(x) = hbm {
            c.draw_series(std::iter::once(Circle::new((x, *rate), 7, color.filled())))?
                .label(format!("{tag} {short} (● HBM ▲ L2 ■ L1)"))
                .legend(move |(x, y)| Circle::new((x + 10, y), 6, color.filled()));
            c.draw_series(std::iter::once(Text::new(
                tag.clone(),
                (x * 1.15, *rate * 1.25),
                ("sans-serif", 16).into_font().color(&color),
            )))?;
        }
        if let Some(x) = l2 {
            c.draw_series(std::iter::once(TriangleMarker::new((x, *rate), 8, color.filled())))?;
        }
        if let Some(x) = l1 {
            c.draw_series(std::iter::once(Rectangle::new(
                [(x / 1.08, *rate / 1.12), (x * 1.08, *rate * 1.12)],
                color.filled(),
            )))?;
        }
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 15))
        .draw()?;
    // kernels without a place on the chart are named under it
    if !a.roofline_left_off.is_empty() {
        let list: Vec<String> = a
            .roofline_left_off
            .iter()
            .map(|(tag, name, why)| format!("{tag} {} ({why})", clip(name, 40)))
            .collect();
        let (_, h) = root.dim_in_pixel();
        root.draw(&Text::new(
            format!("Left off: {}", list.join("; ")),
            (20, h as i32 - 18),
            ("sans-serif", 14).into_font().color(&BLACK),
        ))?;
    }
    root.present()?;
    Ok(())
}

/// Draws `roofline.svg` and `roofline.png` into `dir`; their paths.
pub fn draw(a: &Analysis, dir: &Path) -> Result<[PathBuf; 2], Box<dyn std::error::Error>> {
    register_font()?;
    let svg = dir.join("roofline.svg");
    let png = dir.join("roofline.png");
    chart(a, SVGBackend::new(&svg, (1200, 800)).into_drawing_area()).map_err(|e| format!("{}: {e}", svg.display()))?;
    chart(a, BitMapBackend::new(&png, (1200, 800)).into_drawing_area())
        .map_err(|e| format!("{}: {e}", png.display()))?;
    Ok([svg, png])
}
