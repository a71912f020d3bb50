//! Exporting NNabla networks and TenniS modules to ONNX.
