//! Tensor operations: contract group (being written).

use super::OpSpec;

pub const OPS: &[OpSpec] = &[];
