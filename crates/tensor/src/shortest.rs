//! Shortest decimal printing per float dtype (placeholder; being written).
