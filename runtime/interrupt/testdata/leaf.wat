;; leaf.wat has no imports, no globals and no types section entries of its
;; own, so Inject must add the type, import and global sections.
(module
  (func (export "answer") (result i32) (i32.const 42))
  (func (export "spin") (loop $l (br $l))))
