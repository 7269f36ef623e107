//! Code objects: placeholder, being written.
