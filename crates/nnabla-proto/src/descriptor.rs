//! The embedded schema descriptor (`generated/descriptor.bin`).

use std::sync::OnceLock;

use prost_reflect::{DescriptorPool, MessageDescriptor};

use crate::{Error, Result};

/// The encoded `FileDescriptorSet` of `proto/nnabla.proto`, as written by
/// `cargo xtask regen-proto` (protox, no source info).
pub const DESCRIPTOR_SET: &[u8] = include_bytes!("generated/descriptor.bin");

static POOL: OnceLock<std::result::Result<DescriptorPool, String>> = OnceLock::new();

/// The descriptor pool of the NNabla schema (207 messages, no package).
pub fn descriptor_pool() -> Result<&'static DescriptorPool> {
    POOL.get_or_init(|| DescriptorPool::decode(DESCRIPTOR_SET).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(|e| Error::Descriptor(e.clone()))
}

/// The descriptor of the root message `NNablaProtoBuf`.
pub fn root_descriptor() -> Result<MessageDescriptor> {
    descriptor_pool()?
        .get_message_by_name("NNablaProtoBuf")
        .ok_or_else(|| Error::Descriptor("no message NNablaProtoBuf".into()))
}
