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

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn checked_in_descriptor_matches_the_generated_code() {
        let pool = descriptor_pool().unwrap();
        let messages: Vec<_> = pool.all_messages().filter(|m| !m.is_map_entry()).collect();
        assert_eq!(messages.len(), 207);
        // one prost struct per message in the generated code
        let code = include_str!("generated/nnabla.rs");
        assert_eq!(code.matches("::prost::Message)]\npub struct ").count(), 207);
        for m in &messages {
            // prost renames only by casing; compare ignoring case
            let camel: String = m.name().to_string();
            let found = code.lines().any(|l| {
                l.strip_prefix("pub struct ")
                    .and_then(|r| r.split_whitespace().next())
                    .is_some_and(|s| s.eq_ignore_ascii_case(&camel))
            });
            assert!(found, "no generated struct for {camel}");
        }
        // field numbers the format relies on
        let root = root_descriptor().unwrap();
        let num = |n: &str| root.get_field_by_name(n).map(|f| f.number());
        assert_eq!(num("network"), Some(100));
        assert_eq!(num("parameter"), Some(200));
        assert_eq!(num("executor"), Some(600));
        let func = pool.get_message_by_name("Function").unwrap();
        assert_eq!(
            func.get_field_by_name("affine_param").unwrap().number(),
            1001
        );
        assert_eq!(
            func.get_field_by_name("einsum_param").unwrap().number(),
            1228
        );
        // a message through the descriptor encodes exactly as through prost
        let model = crate::text::parse(
            "network { name: 'n' function { type: 'Affine' affine_param { base_axis: 1 } } }\n\
             parameter { variable_name: 'w' shape { dim: 2 } data: [1, 2] need_grad: true }",
        )
        .unwrap();
        let bytes = model.encode_to_vec();
        let dynamic = prost_reflect::DynamicMessage::decode(root, bytes.as_slice()).unwrap();
        assert_eq!(dynamic.encode_to_vec(), bytes);
    }
}
