//! The iteration order of libstdc++'s `std::unordered_map<std::string, T>`
//! (`docs/formats/primitiv.md` §4), which decides the order of parameter
//! stats and optimizer configs in files the C++ library writes on Linux.
//!
//! The emulation follows libstdc++: `std::hash<std::string>` is
//! `_Hash_bytes(seed 0xc70f6907)` (a 64-bit MurmurHash2 variant), the table
//! starts with one bucket and grows by the prime rehash policy (13, 29, 59,
//! 127, 257, … buckets), a node goes to the front of its bucket (or of the
//! whole list when its bucket is empty), and a rehash re-inserts the nodes
//! in list order. It reproduces every order seen in the golden files (up to
//! 10 keys). Beyond 541 keys the table of primes here ends and the next
//! prime is computed, which may not be libstdc++'s choice.

const MUL: u64 = 0xc6a4_a793_5bd1_e995;
const SEED: u64 = 0xc70f_6907;

fn shift_mix(v: u64) -> u64 {
    v ^ (v >> 47)
}

/// libstdc++'s `_Hash_bytes(bytes, len, 0xc70f6907)` on 64-bit hosts: `std::hash<std::string>`.
pub fn hash_bytes(b: &[u8]) -> u64 {
    let n = b.len();
    let whole = n & !7;
    let mut h = SEED ^ (n as u64).wrapping_mul(MUL);
    for c in b[..whole].chunks_exact(8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let d = shift_mix(u64::from_le_bytes(w).wrapping_mul(MUL)).wrapping_mul(MUL);
        h ^= d;
        h = h.wrapping_mul(MUL);
    }
    if n & 7 != 0 {
        let mut w = [0u8; 8];
        w[..n - whole].copy_from_slice(&b[whole..]);
        h ^= u64::from_le_bytes(w);
        h = h.wrapping_mul(MUL);
    }
    h = shift_mix(h).wrapping_mul(MUL);
    shift_mix(h)
}

const PRIMES: [usize; 100] = [
    2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97,
    103, 109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 197, 199, 211, 227, 229, 233, 239, 241,
    251, 257, 263, 269, 271, 277, 281, 283, 293, 307, 311, 313, 317, 331, 337, 347, 349, 353, 359,
    367, 373, 379, 383, 389, 397, 401, 409, 419, 421, 431, 433, 439, 443, 449, 457, 461, 463, 467,
    479, 487, 491, 499, 503, 509, 521, 523, 541, 547, 557, 563, 569, 571, 577, 587, 593, 599,
];
const FAST: [usize; 14] = [2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13];

struct UMap {
    buckets: usize,
    next_resize: usize,
    // (index into the caller's keys, hash) in iteration order
    list: Vec<(usize, u64)>,
}

impl UMap {
    fn next_bkt(&mut self, n: usize) -> usize {
        if n < FAST.len() {
            if n == 0 {
                return 1;
            }
            self.next_resize = FAST[n];
            return FAST[n];
        }
        let p = PRIMES[6..]
            .iter()
            .copied()
            .find(|&p| p >= n)
            .unwrap_or_else(|| next_prime(n));
        self.next_resize = p;
        p
    }

    fn need_rehash(&mut self, nelt: usize, nins: usize) -> Option<usize> {
        if nelt + nins > self.next_resize {
            let minb = (nelt + nins).max(if self.next_resize != 0 { 0 } else { 11 });
            if minb >= self.buckets {
                return Some(self.next_bkt((minb + 1).max(self.buckets * 2)));
            }
            self.next_resize = self.buckets;
        }
        None
    }

    fn place(list: &mut Vec<(usize, u64)>, node: (usize, u64), nb: usize) {
        let b = node.1 % nb as u64;
        match list.iter().position(|&(_, h)| h % nb as u64 == b) {
            Some(i) => list.insert(i, node),
            None => list.insert(0, node),
        }
    }
}

fn next_prime(mut n: usize) -> usize {
    loop {
        if n >= 2
            && (2..)
                .take_while(|d| d * d <= n)
                .all(|d| !n.is_multiple_of(d))
        {
            return n;
        }
        n += 1;
    }
}

/// The order in which libstdc++ iterates a `std::unordered_map<std::string, _>`
/// after the keys were inserted in the given order (a repeated key is
/// ignored, as `emplace` does). Returns indices into `keys`.
pub fn unordered_map_order<K: AsRef<[u8]>>(keys: &[K]) -> Vec<usize> {
    let mut m = UMap {
        buckets: 1,
        next_resize: 0,
        list: Vec::with_capacity(keys.len()),
    };
    for (i, k) in keys.iter().enumerate() {
        let kb = k.as_ref();
        if m.list.iter().any(|&(j, _)| keys[j].as_ref() == kb) {
            continue;
        }
        if let Some(nb) = m.need_rehash(m.list.len(), 1) {
            let old = std::mem::take(&mut m.list);
            m.buckets = nb;
            for node in old {
                UMap::place(&mut m.list, node, nb);
            }
        }
        let nb = m.buckets;
        UMap::place(&mut m.list, (i, hash_bytes(kb)), nb);
    }
    m.list.into_iter().map(|(i, _)| i).collect()
}

/// The order in which the C++ optimizers insert their configs
/// (`get_configs`: the base class's keys, then the class's own); unknown
/// keys come after these.
pub const CONFIG_INSERTION_ORDER: [&str; 18] = [
    "Optimizer.epoch",
    "Optimizer.lr_scale",
    "Optimizer.l2_strength",
    "Optimizer.clip_threshold",
    "SGD.eta",
    "MomentumSGD.eta",
    "MomentumSGD.momentum",
    "AdaGrad.eta",
    "AdaGrad.eps",
    "RMSProp.eta",
    "RMSProp.alpha",
    "RMSProp.eps",
    "AdaDelta.rho",
    "AdaDelta.eps",
    "Adam.alpha",
    "Adam.beta1",
    "Adam.beta2",
    "Adam.eps",
];

/// The order the C++ library writes a config map with these keys in:
/// the keys are inserted in [`CONFIG_INSERTION_ORDER`] (others after, in
/// the given order), then iterated as libstdc++ does. Returns indices.
pub fn config_order<K: AsRef<[u8]>>(keys: &[K]) -> Vec<usize> {
    let rank = |k: &[u8]| {
        CONFIG_INSERTION_ORDER
            .iter()
            .position(|c| c.as_bytes() == k)
            .unwrap_or(CONFIG_INSERTION_ORDER.len())
    };
    let mut ins: Vec<usize> = (0..keys.len()).collect();
    ins.sort_by_key(|&i| rank(keys[i].as_ref()));
    let sorted: Vec<&[u8]> = ins.iter().map(|&i| keys[i].as_ref()).collect();
    unordered_map_order(&sorted)
        .into_iter()
        .map(|j| ins[j])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(keys: &[&str]) -> Vec<String> {
        unordered_map_order(keys)
            .into_iter()
            .map(|i| keys[i].to_string())
            .collect()
    }

    #[test]
    fn reproduces_the_orders_of_the_golden_files() {
        let base = [
            "Optimizer.lr_scale",
            "Optimizer.l2_strength",
            "Optimizer.clip_threshold",
        ];
        let with =
            |k: &[&'static str]| -> Vec<&'static str> { base.iter().chain(k).copied().collect() };
        assert_eq!(
            order(&with(&["SGD.eta"])),
            [
                "SGD.eta",
                "Optimizer.clip_threshold",
                "Optimizer.l2_strength",
                "Optimizer.lr_scale"
            ]
        );
        assert_eq!(
            order(&with(&[
                "Adam.alpha",
                "Adam.beta1",
                "Adam.beta2",
                "Adam.eps"
            ])),
            [
                "Adam.beta2",
                "Adam.beta1",
                "Optimizer.clip_threshold",
                "Adam.eps",
                "Adam.alpha",
                "Optimizer.l2_strength",
                "Optimizer.lr_scale"
            ]
        );
        assert_eq!(
            order(&with(&["RMSProp.eta", "RMSProp.alpha", "RMSProp.eps"])),
            [
                "RMSProp.eps",
                "RMSProp.eta",
                "Optimizer.clip_threshold",
                "Optimizer.l2_strength",
                "RMSProp.alpha",
                "Optimizer.lr_scale"
            ]
        );
        assert_eq!(order(&["Adam.m1", "Adam.m2"]), ["Adam.m2", "Adam.m1"]);
        assert_eq!(order(&["Adam.m2", "Adam.m1"]), ["Adam.m1", "Adam.m2"]);
        assert_eq!(
            order(&["AdaDelta.m1", "AdaDelta.m2"]),
            ["AdaDelta.m2", "AdaDelta.m1"]
        );
        assert_eq!(
            order(&["a", "b", "c", "d", "e", "f", "g", "h", "z", "stat_long"]),
            ["stat_long", "z", "g", "f", "e", "c", "h", "b", "d", "a"]
        );
        // duplicates are ignored (emplace)
        assert_eq!(order(&["a", "a"]), ["a"]);
        // growth past 13 and 29 buckets does not panic and keeps every key once
        let many: Vec<String> = (0..700).map(|i| format!("k{i}")).collect();
        let mut o = unordered_map_order(&many);
        o.sort_unstable();
        assert_eq!(o, (0..700).collect::<Vec<_>>());
    }

    #[test]
    fn config_order_depends_only_on_the_key_set() {
        let sorted = [
            "Optimizer.clip_threshold",
            "Optimizer.l2_strength",
            "Optimizer.lr_scale",
            "SGD.eta",
        ];
        let o: Vec<&str> = config_order(&sorted)
            .into_iter()
            .map(|i| sorted[i])
            .collect();
        assert_eq!(
            o,
            [
                "SGD.eta",
                "Optimizer.clip_threshold",
                "Optimizer.l2_strength",
                "Optimizer.lr_scale"
            ]
        );
    }
}
