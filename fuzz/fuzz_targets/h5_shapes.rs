#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| mlformats_fuzz::h5_shapes(data));
