//! Importing ONNX models into NNabla networks and TenniS modules.
