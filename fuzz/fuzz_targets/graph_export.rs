#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mlformats_fuzz::graph_export(data));
