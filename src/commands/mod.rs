pub mod ci;
pub mod explore;
pub mod list;
pub mod mutants;
pub mod replay;
pub mod shrink;
