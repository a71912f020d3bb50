//! Typed views of optimizer configs for every optimizer class of primitiv
//! (`docs/formats/primitiv.md` §3.5).
//!
//! [`Sgd::from_optimizer`] and friends apply a file's configs the way the
//! library's `Optimizer::load` → `set_configs` does on a freshly constructed
//! object: each known key is taken from its own map (uint or float), the
//! first entry of a repeated key wins, missing keys keep the constructor
//! defaults, and unknown keys are ignored. There is no class check in the
//! library, so any file gives any class (only the keys present apply).
//! `to_optimizer` gives the configs the library would save, in the order it
//! saves them (libstdc++), so the result writes byte-identically.

use crate::Optimizer;
use crate::order::config_order;

/// The configs every optimizer has (the `Optimizer` base class).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BaseConfigs {
    /// `Optimizer.epoch` (uint): the number of `update()` calls. Default 0.
    pub epoch: u32,
    /// `Optimizer.lr_scale`: learning-rate scale. Default 1.
    pub lr_scale: f32,
    /// `Optimizer.l2_strength`: weight decay. Default 0.
    pub l2_strength: f32,
    /// `Optimizer.clip_threshold`: gradient clipping (0 = off). Default 0.
    pub clip_threshold: f32,
}

impl Default for BaseConfigs {
    fn default() -> Self {
        BaseConfigs {
            epoch: 0,
            lr_scale: 1.0,
            l2_strength: 0.0,
            clip_threshold: 0.0,
        }
    }
}

impl BaseConfigs {
    /// The base configs of `o` (defaults for missing keys).
    pub fn from_optimizer(o: &Optimizer) -> Self {
        let d = BaseConfigs::default();
        BaseConfigs {
            epoch: o.uint("Optimizer.epoch").unwrap_or(d.epoch),
            lr_scale: o.float("Optimizer.lr_scale").unwrap_or(d.lr_scale),
            l2_strength: o.float("Optimizer.l2_strength").unwrap_or(d.l2_strength),
            clip_threshold: o
                .float("Optimizer.clip_threshold")
                .unwrap_or(d.clip_threshold),
        }
    }

    fn to_optimizer(self, class: &[(&str, f32)]) -> Optimizer {
        let mut floats: Vec<(Vec<u8>, f32)> = vec![
            (b"Optimizer.lr_scale".to_vec(), self.lr_scale),
            (b"Optimizer.l2_strength".to_vec(), self.l2_strength),
            (b"Optimizer.clip_threshold".to_vec(), self.clip_threshold),
        ];
        floats.extend(class.iter().map(|(k, v)| (k.as_bytes().to_vec(), *v)));
        let order = config_order(&floats.iter().map(|(k, _)| k.as_slice()).collect::<Vec<_>>());
        Optimizer {
            uint_configs: vec![(b"Optimizer.epoch".to_vec(), self.epoch)],
            float_configs: order.into_iter().map(|i| floats[i].clone()).collect(),
        }
    }
}

/// The optimizer classes of primitiv.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OptimizerClass {
    /// `SGD`.
    Sgd,
    /// `MomentumSGD`.
    MomentumSgd,
    /// `AdaGrad`.
    AdaGrad,
    /// `RMSProp`.
    RmsProp,
    /// `AdaDelta`.
    AdaDelta,
    /// `Adam`.
    Adam,
}

impl OptimizerClass {
    /// The C++ class name, which is also its config key prefix (`Adam` for `Adam.alpha`).
    pub fn name(self) -> &'static str {
        match self {
            OptimizerClass::Sgd => "SGD",
            OptimizerClass::MomentumSgd => "MomentumSGD",
            OptimizerClass::AdaGrad => "AdaGrad",
            OptimizerClass::RmsProp => "RMSProp",
            OptimizerClass::AdaDelta => "AdaDelta",
            OptimizerClass::Adam => "Adam",
        }
    }

    /// The parameter stats this class adds (`docs/formats/primitiv.md` §3.5.2).
    pub fn stat_keys(self) -> &'static [&'static str] {
        match self {
            OptimizerClass::Sgd => &[],
            OptimizerClass::MomentumSgd => &["MomentumSGD.m"],
            OptimizerClass::AdaGrad => &["AdaGrad.m"],
            OptimizerClass::RmsProp => &["RMSProp.m"],
            OptimizerClass::AdaDelta => &["AdaDelta.m1", "AdaDelta.m2"],
            OptimizerClass::Adam => &["Adam.m1", "Adam.m2"],
        }
    }

    const ALL: [OptimizerClass; 6] = [
        OptimizerClass::Sgd,
        OptimizerClass::MomentumSgd,
        OptimizerClass::AdaGrad,
        OptimizerClass::RmsProp,
        OptimizerClass::AdaDelta,
        OptimizerClass::Adam,
    ];
}

impl Optimizer {
    /// The class whose float keys (`<Class>.<name>`) the file holds, if
    /// exactly one class's prefix occurs. The file itself does not record
    /// the class; a file with only base keys gives `None`.
    pub fn guess_class(&self) -> Option<OptimizerClass> {
        let mut found = OptimizerClass::ALL.iter().copied().filter(|c| {
            let p = format!("{}.", c.name());
            self.float_configs
                .iter()
                .any(|(k, _)| k.starts_with(p.as_bytes()))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
}

macro_rules! optimizer {
    (
        $(#[$doc:meta])* $name:ident, $class:ident, $prefix:literal,
        { $( $(#[$fdoc:meta])* $field:ident : $key:literal = $default:expr ),* $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub struct $name {
            /// The base-class configs.
            pub base: BaseConfigs,
            $( $(#[$fdoc])* pub $field: f32, )*
        }

        impl Default for $name {
            fn default() -> Self {
                $name { base: BaseConfigs::default(), $( $field: $default, )* }
            }
        }

        impl $name {
            /// The config keys of this class (float map), in the library's insertion order.
            pub const KEYS: &'static [&'static str] = &[$($key),*];

            /// The configs of `o` applied to a default-constructed object, as `Optimizer::load` does.
            pub fn from_optimizer(o: &Optimizer) -> Self {
                let d = $name::default();
                $name {
                    base: BaseConfigs::from_optimizer(o),
                    $( $field: o.float($key).unwrap_or(d.$field), )*
                }
            }

            /// The configs the library saves for this object, in its order (byte-identical output).
            pub fn to_optimizer(&self) -> Optimizer {
                self.base.to_optimizer(&[$(($key, self.$field)),*])
            }

            /// The class.
            pub fn class() -> OptimizerClass {
                OptimizerClass::$class
            }
        }
    };
}

optimizer!(
    /// `SGD`: plain stochastic gradient descent.
    Sgd, Sgd, "SGD", {
        /// `SGD.eta`: learning rate (default 0.1).
        eta: "SGD.eta" = 0.1,
    }
);
optimizer!(
    /// `MomentumSGD`: SGD with momentum (stat `MomentumSGD.m`).
    MomentumSgd, MomentumSgd, "MomentumSGD", {
        /// `MomentumSGD.eta`: learning rate (default 0.01).
        eta: "MomentumSGD.eta" = 0.01,
        /// `MomentumSGD.momentum`: decay of the moving average (default 0.9).
        momentum: "MomentumSGD.momentum" = 0.9,
    }
);
optimizer!(
    /// `AdaGrad` (stat `AdaGrad.m`).
    AdaGrad, AdaGrad, "AdaGrad", {
        /// `AdaGrad.eta`: learning rate (default 0.001).
        eta: "AdaGrad.eta" = 0.001,
        /// `AdaGrad.eps`: bias for the denominator (default 1e-8).
        eps: "AdaGrad.eps" = 1e-8,
    }
);
optimizer!(
    /// `RMSProp` (stat `RMSProp.m`).
    RmsProp, RmsProp, "RMSProp", {
        /// `RMSProp.eta`: learning rate (default 0.01).
        eta: "RMSProp.eta" = 0.01,
        /// `RMSProp.alpha`: decay of the moving average (default 0.9).
        alpha: "RMSProp.alpha" = 0.9,
        /// `RMSProp.eps`: bias for the denominator (default 1e-8).
        eps: "RMSProp.eps" = 1e-8,
    }
);
optimizer!(
    /// `AdaDelta` (stats `AdaDelta.m1`, `AdaDelta.m2`).
    AdaDelta, AdaDelta, "AdaDelta", {
        /// `AdaDelta.rho`: decay factor (default 0.95).
        rho: "AdaDelta.rho" = 0.95,
        /// `AdaDelta.eps`: bias for the denominator (default 1e-6).
        eps: "AdaDelta.eps" = 1e-6,
    }
);
optimizer!(
    /// `Adam` (stats `Adam.m1`, `Adam.m2`).
    Adam, Adam, "Adam", {
        /// `Adam.alpha`: learning rate (default 0.001).
        alpha: "Adam.alpha" = 0.001,
        /// `Adam.beta1`: decay of the first moment (default 0.9).
        beta1: "Adam.beta1" = 0.9,
        /// `Adam.beta2`: decay of the second moment (default 0.999).
        beta2: "Adam.beta2" = 0.999,
        /// `Adam.eps`: bias for the denominator (default 1e-8).
        eps: "Adam.eps" = 1e-8,
    }
);
