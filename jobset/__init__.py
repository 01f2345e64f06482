"""JobSet (jobset.x-k8s.io/v1alpha2) as a fakecluster workload plugin: API types, webhooks, controller."""
