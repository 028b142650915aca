//! Reverse-mode automatic differentiation (spec §8): tapes, tracked
//! tensors, the recording of every differentiable operation, `backward`,
//! and the two places where the gradient-dtype rule lives.
//!
//! A tape has a *level*, a number that grows with every `tape()`. Watching
//! a tensor on a tape makes a leaf node of that level and wraps the tensor
//! in a [`Tracked`] value. An operation with a tracked operand finds the
//! highest level among its operands, computes the operation on their
//! primals (which may themselves be tracked by lower, outer tapes, so the
//! computation is recorded there too), and records one node at that level
//! holding its arguments and its primal output. `backward` walks the nodes
//! reachable from the root in reverse creation order and runs each node's
//! vjp rule ([`rules`]; linear algebra's in [`linalg`]) — written with the same recording operations, so
//! the backward pass of an inner tape is itself recorded on the outer ones.
//! That is what makes `hessian` exact: it differentiates the gradient.
//!
//! The gradient-dtype rule is decided in exactly two places, as the seed
//! asks: [`backward`] allocates each node's cotangent at
//! `grad_dtype(node.dtype)` (f64 for f64, f32 for every other dtype), and
//! [`accumulate`] rounds each contribution to the cotangent's dtype as it
//! adds it. The rules never name a dtype: they compute at the cotangent's
//! width (narrow primals are widened first, see `rules::wide`).

mod arith;
mod backward;
pub(crate) mod functional;
mod linalg;
mod record;
mod rules;

pub(crate) use backward::{backward, backward_scaled, grads_finite};
pub(crate) use record::{assign, binary, binary_values, cast, index, op, op_pos, reverse, watch};
