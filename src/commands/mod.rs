pub mod explore;
pub mod list;
pub mod replay;
pub mod shrink;
