pub mod ci;
pub mod completions;
pub mod explore;
pub mod list;
pub mod merge;
pub mod mutants;
pub mod replay;
pub mod shrink;
