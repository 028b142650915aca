//! Conversions between the seven dtypes (placeholder; being written).
