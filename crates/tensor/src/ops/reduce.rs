//! Tensor operations: reduce group (being written).

use super::OpSpec;

pub const OPS: &[OpSpec] = &[];
