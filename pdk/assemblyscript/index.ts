// Package entry for asc, which resolves "@workbench/pdk-assemblyscript" to
// this file: everything lives in assembly/.
export * from "./assembly/index";
