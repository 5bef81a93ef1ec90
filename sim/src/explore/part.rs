//! Where one exploration sits in a larger one: the run indices a shard or a parallel job takes,
//! the DFS subtrees a job explores, a deepening level's share of the budget. Kept off the
//! public builder (only `first_run` and `stride`, which a shard sets, are public there): these
//! are set by the explorations that split a search (`parallel`, `deepen`), not by callers.

/// The part of a larger search that one exploration covers (the whole of it by default).
pub(super) struct Part {
    /// The first run index (a shard of the run space starts past zero).
    pub(super) first_run: u64,
    /// Every `stride`-th run index from `first_run` on (shard i of n: `i - 1` and `n`).
    pub(super) stride: u64,
    /// A DFS job of a parallel exploration: job i of n explores subtrees i, i + n, ... of its
    /// shard's (a fixed partition, so that what each job finds is independent of timing).
    pub(super) dfs_job: Option<(u64, u64)>,
    /// At most this many runs, pruned ones included (a deepening level's share).
    pub(super) max_attempts: Option<u64>,
    /// Sample pruned branches without auditing them here: a caller (a deepening, a parallel
    /// search) audits the merged sample.
    pub(super) sampling_only: bool,
}

impl Default for Part {
    fn default() -> Self {
        Part {
            first_run: 0,
            stride: 1,
            dfs_job: None,
            max_attempts: None,
            sampling_only: false,
        }
    }
}
