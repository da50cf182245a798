mod runtime;
mod styles;
