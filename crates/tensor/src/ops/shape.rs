//! Tensor operations: shape group (being written).

use super::OpSpec;

pub const OPS: &[OpSpec] = &[];
