//! stub
mod text;
mod yaml;
