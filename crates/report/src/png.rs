//! Charts as PNG, rendered from the same SVG by resvg (pure Rust, system fonts).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use crate::ReportError;

/// Pixels per SVG unit: 2x for sharp text on high-density screens and in documents.
const SCALE: f32 = 2.0;

fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    static FONTS: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = resvg::usvg::fontdb::Database::new();
            db.load_system_fonts();
            // Charts ask for the generic `sans-serif`: map it to a face this host has.
            let families: Vec<String> = db
                .faces()
                .flat_map(|f| f.families.iter().map(|(name, _)| name.clone()))
                .collect();
            let preferred = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "FreeSans"];
            if let Some(family) = preferred
                .iter()
                .find(|p| families.iter().any(|f| f == *p))
                .map(|p| p.to_string())
                .or_else(|| families.first().cloned())
            {
                db.set_sans_serif_family(family);
            }
            Arc::new(db)
        })
        .clone()
}

/// Renders `svg` to a PNG file at `path`.
pub fn write_png(svg: &str, path: &Path) -> Result<(), ReportError> {
    let options = resvg::usvg::Options {
        fontdb: fonts(),
        ..Default::default()
    };
    let tree = resvg::usvg::Tree::from_str(svg, &options).map_err(|e| ReportError::Input {
        source_name: path.display().to_string(),
        message: format!("cannot render chart: {e}"),
    })?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(SCALE)
        .ok_or_else(|| ReportError::Input {
            source_name: path.display().to_string(),
            message: "chart has no size".to_string(),
        })?;
    let mut pixmap =
        resvg::tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| {
            ReportError::Input {
                source_name: path.display().to_string(),
                message: "chart too large to render".to_string(),
            }
        })?;
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    let png = pixmap.encode_png().map_err(|e| ReportError::Input {
        source_name: path.display().to_string(),
        message: format!("cannot encode PNG: {e}"),
    })?;
    pauselab_pause::output::write_file(path, &png).map_err(|error| ReportError::Io {
        path: path.display().to_string(),
        error,
    })
}
