//! Terminal renderers, one file per subject.

pub mod lab_conclusions;
pub mod lab_list;
pub mod lab_matrix;
pub mod lab_plan;
pub mod lab_progress;
pub mod lab_table;
