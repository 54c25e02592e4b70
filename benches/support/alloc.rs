//! The allocator the `rwtop` binary runs on (src/main.rs), for the live benches that measure the
//! binary's CPU and memory (`scale`, `poll_path`). Included with `#[path]`, as the other support
//! files are.

#[global_allocator]
static ALLOC: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
