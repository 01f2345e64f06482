"""``jobset.x-k8s.io/v1alpha2``: :mod:`.jobset_types` (``jobset_types.go``) and :mod:`.crd` (the CRD's
defaults, enums and CEL rules, from the kubebuilder markers in the same file)."""
