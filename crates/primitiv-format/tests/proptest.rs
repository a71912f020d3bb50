//! Property tests for every writer/reader pair: Shape, Tensor, Parameter
//! (stats of any key, duplicates included), Model (nested key paths of any
//! bytes) and Optimizer (raw configs and every typed class). Random names
//! (empty, long, non-ASCII, invalid UTF-8), shapes from 0-d to the format's
//! 8 dims with batches, and f32 data with NaN payloads and -0.0, compared
//! bit for bit. Model keys have a reference order (byte-wise, the C++
//! `std::map`), so writing a model is independent of the order of its
//! entries and deterministic.

use primitiv_format::{
    AdaDelta, AdaGrad, Adam, BaseConfigs, DataType, File, Model, MomentumSgd, Optimizer, Order,
    Parameter, ReadOptions, RmsProp, Sgd, Shape, Tensor, WriteOptions,
};
use proptest::prelude::*;

/// Names as raw bytes: empty, ASCII with dots, non-ASCII UTF-8, long, and
/// arbitrary bytes (the format's str is not required to be UTF-8).
fn name() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(Vec::new()),
        "[a-z_.0-9]{1,10}".prop_map(String::into_bytes),
        "[α-ω日本語é]{1,6}".prop_map(String::into_bytes),
        "[a-z]{32,300}".prop_map(String::into_bytes),
        proptest::collection::vec(any::<u8>(), 1..12),
    ]
}

/// f32 bit patterns: any, quiet and signalling NaNs with payloads, -0.0, infinities.
fn f32_bits() -> impl Strategy<Value = u32> {
    prop_oneof![
        3 => any::<u32>(),
        1 => (0u32..0x40_0000).prop_map(|p| 0x7fc0_0000 | p),
        1 => (1u32..0x40_0000).prop_map(|p| 0xff80_0000 | p),
        1 => Just(0x8000_0000u32),
        1 => Just(0xff80_0000u32),
    ]
}

/// A shape: 0 to 8 dims (all ≥ 1, trailing 1s included), batch 1 to 3.
fn shape_with_batch(max_batch: u32) -> impl Strategy<Value = Shape> {
    (0usize..=Shape::MAX_DEPTH)
        .prop_flat_map(move |rank| {
            let hi = if rank > 4 { 2u32 } else { 4 };
            (proptest::collection::vec(1u32..=hi, rank), 1u32..=max_batch)
        })
        .prop_map(|(dims, batch)| Shape::new(dims, batch).expect("valid shape"))
}

fn tensor_of(shape: Shape) -> impl Strategy<Value = Tensor<'static>> {
    let n = shape.size().expect("small") as usize;
    proptest::collection::vec(f32_bits(), n).prop_map(move |bits| {
        let bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        Tensor::new(shape.clone(), bytes).expect("sizes match")
    })
}

fn tensor(max_batch: u32) -> impl Strategy<Value = Tensor<'static>> {
    shape_with_batch(max_batch).prop_flat_map(tensor_of)
}

fn parameter() -> impl Strategy<Value = Parameter<'static>> {
    (
        tensor(1),
        proptest::collection::vec((name(), tensor(3)), 0..4),
    )
        .prop_map(|(value, stats)| {
            let mut p = Parameter::new(value).expect("batch 1");
            p.stats = stats;
            p
        })
}

/// Key paths of 1 to 3 components, distinct.
fn model() -> impl Strategy<Value = Model<'static>> {
    proptest::collection::vec(
        (proptest::collection::vec(name(), 1..=3), parameter()),
        0..5,
    )
    .prop_map(|entries| {
        let mut seen = std::collections::HashSet::new();
        let mut m = Model::new();
        for (k, p) in entries {
            if seen.insert(k.clone()) {
                m.entries.push((k, p));
            }
        }
        m
    })
}

fn same_shape(a: &Shape, b: &Shape) -> bool {
    a.dims() == b.dims() && a.batch() == b.batch()
}

fn same_tensor(a: &Tensor<'_>, b: &Tensor<'_>) -> bool {
    same_shape(a.shape(), b.shape()) && a.data() == b.data()
}

fn same_stats(a: &[(Vec<u8>, Tensor<'_>)], b: &[(Vec<u8>, Tensor<'_>)]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, ta), (kb, tb))| ka == kb && same_tensor(ta, tb))
}

fn same_param(a: &Parameter<'_>, b: &Parameter<'_>) -> bool {
    same_tensor(&a.value, &b.value) && same_stats(&a.stats, &b.stats)
}

fn bits(v: &[(Vec<u8>, f32)]) -> Vec<(Vec<u8>, u32)> {
    v.iter().map(|(k, f)| (k.clone(), f.to_bits())).collect()
}

fn write_file(f: &File<'_>, opts: &WriteOptions) -> Vec<u8> {
    let mut out = Vec::new();
    f.write(&mut out, opts).expect("writable");
    out
}

fn base() -> impl Strategy<Value = BaseConfigs> {
    (any::<u32>(), f32_bits(), f32_bits(), f32_bits()).prop_map(|(epoch, a, b, c)| BaseConfigs {
        epoch,
        lr_scale: f32::from_bits(a),
        l2_strength: f32::from_bits(b),
        clip_threshold: f32::from_bits(c),
    })
}

fn f() -> impl Strategy<Value = f32> {
    f32_bits().prop_map(f32::from_bits)
}

/// Every typed optimizer with random configs, as the raw config maps the library writes.
fn typed_optimizer() -> impl Strategy<Value = Optimizer> {
    prop_oneof![
        (base(), f()).prop_map(|(base, eta)| Sgd { base, eta }.to_optimizer()),
        (base(), f(), f()).prop_map(|(base, eta, momentum)| MomentumSgd {
            base,
            eta,
            momentum
        }
        .to_optimizer()),
        (base(), f(), f()).prop_map(|(base, eta, eps)| AdaGrad { base, eta, eps }.to_optimizer()),
        (base(), f(), f(), f()).prop_map(|(base, eta, alpha, eps)| RmsProp {
            base,
            eta,
            alpha,
            eps
        }
        .to_optimizer()),
        (base(), f(), f()).prop_map(|(base, rho, eps)| AdaDelta { base, rho, eps }.to_optimizer()),
        (base(), f(), f(), f(), f()).prop_map(|(base, alpha, beta1, beta2, eps)| Adam {
            base,
            alpha,
            beta1,
            beta2,
            eps
        }
        .to_optimizer()),
    ]
}

/// Raw configs: any keys (duplicates possible), any values.
fn raw_optimizer() -> impl Strategy<Value = Optimizer> {
    (
        proptest::collection::vec((name(), any::<u32>()), 0..6),
        proptest::collection::vec((name(), f()), 0..6),
    )
        .prop_map(|(uint_configs, float_configs)| Optimizer {
            uint_configs,
            float_configs,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn shape_round_trips(s in shape_with_batch(9)) {
        let bytes = write_file(&File::Shape(s.clone()), &WriteOptions::default());
        let back = Shape::parse(&bytes).expect("reads back");
        // The writer drops trailing 1s as the library does; nothing else changes.
        prop_assert!(same_shape(&back, &s), "{back:?} vs {s:?}");
        prop_assert_eq!(back.stored_dims(), s.dims());
        prop_assert_eq!(write_file(&File::Shape(back), &WriteOptions::default()), bytes);
    }

    #[test]
    fn tensor_round_trips(t in tensor(3)) {
        let bytes = write_file(&File::Tensor(t.clone()), &WriteOptions::default());
        let back = Tensor::parse(&bytes).expect("reads back");
        prop_assert!(same_tensor(&back, &t));
        prop_assert!(bytes.as_ptr_range().contains(&back.data().as_ptr()) || back.data().is_empty());
        prop_assert_eq!(write_file(&File::Tensor(back), &WriteOptions::default()), bytes);
    }

    #[test]
    fn parameter_round_trips(p in parameter(), with_stats in any::<bool>()) {
        let opts = WriteOptions::default().with_stats(with_stats);
        let bytes = write_file(&File::Parameter(p.clone()), &opts);
        let back = Parameter::parse(&bytes).expect("reads back");
        prop_assert!(same_tensor(&back.value, &p.value));
        if with_stats {
            prop_assert!(same_stats(&back.stats, &p.stats));
        } else {
            prop_assert!(back.stats.is_empty());
        }
        prop_assert_eq!(write_file(&File::Parameter(back), &opts), bytes);

        // The C++ (libstdc++) order: deterministic, each key once (the first entry).
        let cpp = WriteOptions::default().with_stats_order(Order::Libstdcxx);
        let a = write_file(&File::Parameter(p.clone()), &cpp);
        prop_assert_eq!(&write_file(&File::Parameter(p.clone()), &cpp), &a);
        let back = Parameter::parse(&a).expect("reads back");
        let mut first = p.clone();
        first.dedup_stats();
        prop_assert_eq!(back.stats.len(), first.stats.len());
        for (k, t) in &back.stats {
            prop_assert!(same_tensor(t, first.stat(k).expect("key written")));
        }
    }

    #[test]
    fn model_round_trips_in_key_order(m in model(), seed in any::<u64>()) {
        let opts = WriteOptions::default();
        let bytes = write_file(&File::Model(m.clone()), &opts);
        let File::Model(back) = File::parse(&bytes).expect("reads back") else {
            panic!("not a model")
        };
        let mut sorted = m.entries.clone();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        prop_assert_eq!(back.entries.len(), sorted.len());
        for ((kb, pb), (ks, ps)) in back.entries.iter().zip(&sorted) {
            prop_assert_eq!(kb, ks);
            prop_assert!(same_param(pb, ps));
        }
        // Any entry order gives the same bytes.
        let mut shuffled = m.clone();
        let n = shuffled.entries.len();
        if n > 1 {
            shuffled.entries.rotate_left((seed as usize) % n);
            shuffled.entries.swap(0, (seed as usize / 7) % n);
        }
        prop_assert_eq!(&write_file(&File::Model(shuffled), &opts), &bytes);
        prop_assert_eq!(&write_file(&File::Model(back), &opts), &bytes);
    }

    #[test]
    fn raw_optimizer_round_trips(o in raw_optimizer()) {
        let bytes = write_file(&File::Optimizer(o.clone()), &WriteOptions::default());
        let File::Optimizer(back) = File::parse_with(&bytes, &ReadOptions::expecting(DataType::Optimizer)).expect("reads back") else {
            panic!("not an optimizer")
        };
        prop_assert_eq!(&back.uint_configs, &o.uint_configs);
        prop_assert_eq!(bits(&back.float_configs), bits(&o.float_configs));
        prop_assert_eq!(write_file(&File::Optimizer(back), &WriteOptions::default()), bytes);
    }

    #[test]
    fn typed_optimizer_round_trips(o in typed_optimizer()) {
        // Written in the library's order, read back, and written again in the
        // library's order: the same bytes, and the same configs bit for bit.
        let cpp = WriteOptions::cpp_order();
        let bytes = write_file(&File::Optimizer(o.clone()), &cpp);
        prop_assert_eq!(&write_file(&File::Optimizer(o.clone()), &WriteOptions::default()), &bytes);
        let back = Optimizer::parse(&bytes).expect("reads back");
        prop_assert_eq!(&back.uint_configs, &o.uint_configs);
        prop_assert_eq!(bits(&back.float_configs), bits(&o.float_configs));
        prop_assert_eq!(&write_file(&File::Optimizer(back.clone()), &cpp), &bytes);
        let class = back.guess_class().expect("one class");
        let again = match class.name() {
            "SGD" => Sgd::from_optimizer(&back).to_optimizer(),
            "MomentumSGD" => MomentumSgd::from_optimizer(&back).to_optimizer(),
            "AdaGrad" => AdaGrad::from_optimizer(&back).to_optimizer(),
            "RMSProp" => RmsProp::from_optimizer(&back).to_optimizer(),
            "AdaDelta" => AdaDelta::from_optimizer(&back).to_optimizer(),
            _ => Adam::from_optimizer(&back).to_optimizer(),
        };
        prop_assert_eq!(bits(&again.float_configs), bits(&o.float_configs));
        prop_assert_eq!(&again.uint_configs, &o.uint_configs);
    }
}
