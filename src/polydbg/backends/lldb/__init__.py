"""C, C++ and Rust through lldb-dap (LLVM's DAP adapter) over stdio."""
