//! Tensor operations: order group (being written).

use super::OpSpec;

pub const OPS: &[OpSpec] = &[];
