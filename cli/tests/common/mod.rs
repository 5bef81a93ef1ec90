//! What several test binaries share.

pub mod junit10;
