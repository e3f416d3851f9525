// immutableFields against the API server's own answers. The REAL rows are the texts of Kubernetes
// 1.36.3 (the test cluster), provoked by __tests__/integration/immutable-wordings.test.ts with the
// request the apply engine makes (a server-side apply dry-run of the changed object) and copied here
// verbatim (the Status message without our client's "PATCH <path>: " prefix, and the causes).
import { describe, expect, it } from 'vitest';
import { changedFields, detailOf, immutableFields } from '../../src/ssa/policy.js';

interface Row {
  why: string;
  status: number;
  message: string;
  causes: { field: string; message: string }[];
  /** The fields to recreate for; undefined: not an immutable-field error, never recreated. */
  want: string[] | undefined;
}

const REAL: Row[] = [
  {
    why: 'Service spec.clusterIP changed',
    status: 422,
    message: 'Service "ip" is invalid: spec.clusterIPs[0]: Invalid value: ["10.0.0.213"]: may not change once set',
    causes: [{ field: 'spec.clusterIPs[0]', message: 'Invalid value: ["10.0.0.213"]: may not change once set' }],
    want: ['spec.clusterIPs[0]'],
  },
  {
    why: 'Service made headless (clusterIP: None)',
    status: 422,
    message: 'Service "headless" is invalid: spec.clusterIPs[0]: Invalid value: ["None"]: may not change once set',
    causes: [{ field: 'spec.clusterIPs[0]', message: 'Invalid value: ["None"]: may not change once set' }],
    want: ['spec.clusterIPs[0]'],
  },
  {
    why: 'Service spec.loadBalancerClass changed',
    status: 422,
    message: 'Service "lb" is invalid: spec.loadBalancerClass: Invalid value: "example.com/b": may not change once set',
    causes: [{ field: 'spec.loadBalancerClass', message: 'Invalid value: "example.com/b": may not change once set' }],
    want: ['spec.loadBalancerClass'],
  },
  {
    why: 'Job spec.template changed',
    status: 422,
    message:
      'Job.batch "job-template" is invalid: spec.template: Invalid value: {"labels":{"batch.kubernetes.io/controller-uid":"b330a205-3ca3-4282-8796-a4e75d1926a1","batch.kubernetes.io/job-name":"job-template","controller-uid":"b330a205-3ca3-4282-8796-a4e75d1926a1","job-name":"job-template"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"busybox:1.37","Command":null,"Args":null,"WorkingDir":"","Ports":null,"EnvFrom":null,"Env":null,"Resources":{"Limits":null,"Requests":null,"Claims":null},"ResizePolicy":null,"RestartPolicy":null,"RestartPolicyRules":null,"VolumeMounts":null,"VolumeDevices":null,"LivenessProbe":null,"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,"TerminationMessagePath":"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"IfNotPresent","SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}],"EphemeralContainers":null,"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,"ActiveDeadlineSeconds":null,"DNSPolicy":"ClusterFirst","NodeSelector":null,"ServiceAccountName":"","AutomountServiceAccountToken":null,"NodeName":"","SecurityContext":{"HostNetwork":false,"HostPID":false,"HostIPC":false,"ShareProcessNamespace":null,"HostUsers":null,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,"SupplementalGroupsPolicy":null,"FSGroup":null,"FSGroupChangePolicy":null,"Sysctls":null,"SeccompProfile":null,"AppArmorProfile":null,"SELinuxChangePolicy":null},"ImagePullSecrets":null,"Hostname":"","Subdomain":"","SetHostnameAsFQDN":null,"Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"DNSConfig":null,"ReadinessGates":null,"RuntimeClassName":null,"Overhead":null,"EnableServiceLinks":null,"TopologySpreadConstraints":null,"OS":null,"SchedulingGates":null,"ResourceClaims":null,"Resources":null,"HostnameOverride":null,"SchedulingGroup":null}}: field is immutable',
    causes: [
      {
        field: 'spec.template',
        message:
          'Invalid value: {"labels":{"batch.kubernetes.io/controller-uid":"b330a205-3ca3-4282-8796-a4e75d1926a1","batch.kubernetes.io/job-name":"job-template","controller-uid":"b330a205-3ca3-4282-8796-a4e75d1926a1","job-name":"job-template"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"busybox:1.37","Command":null,"Args":null,"WorkingDir":"","Ports":null,"EnvFrom":null,"Env":null,"Resources":{"Limits":null,"Requests":null,"Claims":null},"ResizePolicy":null,"RestartPolicy":null,"RestartPolicyRules":null,"VolumeMounts":null,"VolumeDevices":null,"LivenessProbe":null,"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,"TerminationMessagePath":"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"IfNotPresent","SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}],"EphemeralContainers":null,"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,"ActiveDeadlineSeconds":null,"DNSPolicy":"ClusterFirst","NodeSelector":null,"ServiceAccountName":"","AutomountServiceAccountToken":null,"NodeName":"","SecurityContext":{"HostNetwork":false,"HostPID":false,"HostIPC":false,"ShareProcessNamespace":null,"HostUsers":null,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,"SupplementalGroupsPolicy":null,"FSGroup":null,"FSGroupChangePolicy":null,"Sysctls":null,"SeccompProfile":null,"AppArmorProfile":null,"SELinuxChangePolicy":null},"ImagePullSecrets":null,"Hostname":"","Subdomain":"","SetHostnameAsFQDN":null,"Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"DNSConfig":null,"ReadinessGates":null,"RuntimeClassName":null,"Overhead":null,"EnableServiceLinks":null,"TopologySpreadConstraints":null,"OS":null,"SchedulingGates":null,"ResourceClaims":null,"Resources":null,"HostnameOverride":null,"SchedulingGroup":null}}: field is immutable',
      },
    ],
    want: ['spec.template'],
  },
  {
    why: 'Job spec.selector changed (manualSelector)',
    status: 422,
    message:
      'Job.batch "job-selector" is invalid: [spec.selector: Invalid value: {"matchLabels":{"run":"b"}}: field is immutable, spec.template: Invalid value: {"labels":{"run":"b"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"busybox:1.36","Command":null,"Args":null,"WorkingDir":"","Ports":null,"EnvFrom":null,"Env":null,"Resources":{"Limits":null,"Requests":null,"Claims":null},"ResizePolicy":null,"RestartPolicy":null,"RestartPolicyRules":null,"VolumeMounts":null,"VolumeDevices":null,"LivenessProbe":null,"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,"TerminationMessagePath":"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"IfNotPresent","SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}],"EphemeralContainers":null,"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,"ActiveDeadlineSeconds":null,"DNSPolicy":"ClusterFirst","NodeSelector":null,"ServiceAccountName":"","AutomountServiceAccountToken":null,"NodeName":"","SecurityContext":{"HostNetwork":false,"HostPID":false,"HostIPC":false,"ShareProcessNamespace":null,"HostUsers":null,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,"SupplementalGroupsPolicy":null,"FSGroup":null,"FSGroupChangePolicy":null,"Sysctls":null,"SeccompProfile":null,"AppArmorProfile":null,"SELinuxChangePolicy":null},"ImagePullSecrets":null,"Hostname":"","Subdomain":"","SetHostnameAsFQDN":null,"Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"DNSConfig":null,"ReadinessGates":null,"RuntimeClassName":null,"Overhead":null,"EnableServiceLinks":null,"TopologySpreadConstraints":null,"OS":null,"SchedulingGates":null,"ResourceClaims":null,"Resources":null,"HostnameOverride":null,"SchedulingGroup":null}}: field is immutable]',
    causes: [
      { field: 'spec.selector', message: 'Invalid value: {"matchLabels":{"run":"b"}}: field is immutable' },
      {
        field: 'spec.template',
        message:
          'Invalid value: {"labels":{"run":"b"},"Spec":{"Volumes":null,"InitContainers":null,"Containers":[{"Name":"c","Image":"busybox:1.36","Command":null,"Args":null,"WorkingDir":"","Ports":null,"EnvFrom":null,"Env":null,"Resources":{"Limits":null,"Requests":null,"Claims":null},"ResizePolicy":null,"RestartPolicy":null,"RestartPolicyRules":null,"VolumeMounts":null,"VolumeDevices":null,"LivenessProbe":null,"ReadinessProbe":null,"StartupProbe":null,"Lifecycle":null,"TerminationMessagePath":"/dev/termination-log","TerminationMessagePolicy":"File","ImagePullPolicy":"IfNotPresent","SecurityContext":null,"Stdin":false,"StdinOnce":false,"TTY":false}],"EphemeralContainers":null,"RestartPolicy":"Never","TerminationGracePeriodSeconds":30,"ActiveDeadlineSeconds":null,"DNSPolicy":"ClusterFirst","NodeSelector":null,"ServiceAccountName":"","AutomountServiceAccountToken":null,"NodeName":"","SecurityContext":{"HostNetwork":false,"HostPID":false,"HostIPC":false,"ShareProcessNamespace":null,"HostUsers":null,"SELinuxOptions":null,"WindowsOptions":null,"RunAsUser":null,"RunAsGroup":null,"RunAsNonRoot":null,"SupplementalGroups":null,"SupplementalGroupsPolicy":null,"FSGroup":null,"FSGroupChangePolicy":null,"Sysctls":null,"SeccompProfile":null,"AppArmorProfile":null,"SELinuxChangePolicy":null},"ImagePullSecrets":null,"Hostname":"","Subdomain":"","SetHostnameAsFQDN":null,"Affinity":null,"SchedulerName":"default-scheduler","Tolerations":null,"HostAliases":null,"PriorityClassName":"","Priority":null,"PreemptionPolicy":null,"DNSConfig":null,"ReadinessGates":null,"RuntimeClassName":null,"Overhead":null,"EnableServiceLinks":null,"TopologySpreadConstraints":null,"OS":null,"SchedulingGates":null,"ResourceClaims":null,"Resources":null,"HostnameOverride":null,"SchedulingGroup":null}}: field is immutable',
      },
    ],
    want: ['spec.selector', 'spec.template'],
  },
  {
    why: 'Deployment spec.selector changed',
    status: 422,
    message:
      'Deployment.apps "deployment" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"b"}}: field is immutable',
    causes: [{ field: 'spec.selector', message: 'Invalid value: {"matchLabels":{"app":"b"}}: field is immutable' }],
    want: ['spec.selector'],
  },
  {
    why: 'DaemonSet spec.selector changed',
    status: 422,
    message:
      'DaemonSet.apps "daemonset" is invalid: spec.selector: Invalid value: {"matchLabels":{"app":"b"}}: field is immutable',
    causes: [{ field: 'spec.selector', message: 'Invalid value: {"matchLabels":{"app":"b"}}: field is immutable' }],
    want: ['spec.selector'],
  },
  {
    why: 'StatefulSet spec.selector changed',
    status: 422,
    message:
      "StatefulSet.apps \"statefulset\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    causes: [
      {
        field: 'spec',
        message:
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      },
    ],
    want: ['spec'],
  },
  {
    why: 'StatefulSet spec.volumeClaimTemplates changed',
    status: 422,
    message:
      "StatefulSet.apps \"vct\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    causes: [
      {
        field: 'spec',
        message:
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      },
    ],
    want: ['spec'],
  },
  {
    why: 'StatefulSet spec.serviceName changed',
    status: 422,
    message:
      "StatefulSet.apps \"svcname\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    causes: [
      {
        field: 'spec',
        message:
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
      },
    ],
    want: ['spec'],
  },
  {
    why: 'PersistentVolumeClaim (not bound) spec.resources.requests changed',
    status: 422,
    message:
      'PersistentVolumeClaim "pending" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -6,7 +6,7 @@\n  "Resources": {\n   "Limits": null,\n   "Requests": {\n-   "storage": "1Gi"\n+   "storage": "500Mi"\n   }\n  },\n  "VolumeName": "",\n',
    causes: [
      {
        field: 'spec',
        message:
          'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -6,7 +6,7 @@\n  "Resources": {\n   "Limits": null,\n   "Requests": {\n-   "storage": "1Gi"\n+   "storage": "500Mi"\n   }\n  },\n  "VolumeName": "",\n',
      },
    ],
    want: ['spec'],
  },
  {
    why: 'PersistentVolumeClaim spec.accessModes changed',
    status: 422,
    message:
      'PersistentVolumeClaim "modes" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -1,6 +1,6 @@\n {\n  "AccessModes": [\n-  "ReadWriteOnce"\n+  "ReadWriteMany"\n  ],\n  "Selector": null,\n  "Resources": {\n',
    causes: [
      {
        field: 'spec',
        message:
          'Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n@@ -1,6 +1,6 @@\n {\n  "AccessModes": [\n-  "ReadWriteOnce"\n+  "ReadWriteMany"\n  ],\n  "Selector": null,\n  "Resources": {\n',
      },
    ],
    want: ['spec'],
  },
  {
    why: 'ConfigMap with immutable: true, data changed',
    status: 422,
    message: 'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    causes: [{ field: 'data', message: 'Forbidden: field is immutable when `immutable` is set' }],
    want: ['data'],
  },
  {
    why: 'ConfigMap immutable: true set back to false',
    status: 422,
    message: 'ConfigMap "thawed" is invalid: immutable: Forbidden: field is immutable when `immutable` is set',
    causes: [{ field: 'immutable', message: 'Forbidden: field is immutable when `immutable` is set' }],
    want: ['immutable'],
  },
  {
    why: 'Secret with immutable: true, data changed',
    status: 422,
    message: 'Secret "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set',
    causes: [{ field: 'data', message: 'Forbidden: field is immutable when `immutable` is set' }],
    want: ['data'],
  },
  {
    why: 'Secret type changed',
    status: 422,
    message: 'Secret "typed" is invalid: type: Invalid value: "example.com/other": field is immutable',
    causes: [{ field: 'type', message: 'Invalid value: "example.com/other": field is immutable' }],
    want: ['type'],
  },
  {
    why: 'CustomResourceDefinition spec.scope changed',
    status: 422,
    message:
      'CustomResourceDefinition.apiextensions.k8s.io "scopes.imm-ddbe1855.example.com" is invalid: spec.scope: Invalid value: "Cluster": field is immutable',
    causes: [{ field: 'spec.scope', message: 'Invalid value: "Cluster": field is immutable' }],
    want: ['spec.scope'],
  },
  {
    why: 'a custom resource field under the CEL rule self == oldSelf, with a message',
    status: 422,
    message: 'Kruled.imm-ddbe1855.example.com "one" is invalid: spec.size: Invalid value: "large": Value is immutable',
    causes: [{ field: 'spec.size', message: 'Invalid value: "large": Value is immutable' }],
    want: ['spec.size'],
  },
  {
    why: 'a custom resource field under the CEL rule self == oldSelf, without a message',
    status: 422,
    message:
      'Kbare.imm-ddbe1855.example.com "one" is invalid: spec.size: Invalid value: "large": failed rule: self == oldSelf',
    causes: [{ field: 'spec.size', message: 'Invalid value: "large": failed rule: self == oldSelf' }],
    want: ['spec.size'],
  },
  {
    why: 'RoleBinding roleRef changed',
    status: 422,
    message:
      'RoleBinding.rbac.authorization.k8s.io "binding" is invalid: roleRef: Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef',
    causes: [
      {
        field: 'roleRef',
        message:
          'Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"ClusterRole","Name":"edit"}: cannot change roleRef',
      },
    ],
    want: ['roleRef'],
  },
  {
    why: 'PriorityClass value changed',
    status: 422,
    message:
      'PriorityClass.scheduling.k8s.io "imm-ddbe1855" is invalid: value: Forbidden: may not be changed in an update.',
    causes: [{ field: 'value', message: 'Forbidden: may not be changed in an update.' }],
    want: ['value'],
  },
  {
    why: 'StorageClass provisioner and parameters changed',
    status: 422,
    message:
      'StorageClass.storage.k8s.io "imm-ddbe1855" is invalid: [parameters: Invalid value: {"k":"b"}: field is immutable, provisioner: Invalid value: "example.com/b": field is immutable]',
    causes: [
      { field: 'parameters', message: 'Invalid value: {"k":"b"}: field is immutable' },
      { field: 'provisioner', message: 'Invalid value: "example.com/b": field is immutable' },
    ],
    want: ['parameters', 'provisioner'],
  },
  {
    why: 'Pod spec field other than image changed',
    status: 422,
    message:
      'Pod "pod" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n@@ -101,7 +101,7 @@\n    "Env": [\n     {\n      "Name": "E",\n-     "Value": "a",\n+     "Value": "b",\n      "ValueFrom": null\n     }\n    ],\n',
    causes: [
      {
        field: 'spec',
        message:
          'Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n@@ -101,7 +101,7 @@\n    "Env": [\n     {\n      "Name": "E",\n-     "Value": "a",\n+     "Value": "b",\n      "ValueFrom": null\n     }\n    ],\n',
      },
    ],
    want: ['spec'],
  },
  {
    why: 'a bad port number on an existing Service (plain validation)',
    status: 422,
    message:
      'Service "port" is invalid: [spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    causes: [
      { field: 'spec.ports[0].port', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' },
      { field: 'spec.ports[0].targetPort', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' },
    ],
    want: undefined,
  },
  {
    why: 'a changed clusterIP together with a bad port (the recreate would fail)',
    status: 422,
    message:
      'Service "mixed" is invalid: [spec.clusterIPs[0]: Invalid value: ["None"]: may not change once set, spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.ports[0].targetPort: Invalid value: 70000: must be between 1 and 65535, inclusive]',
    causes: [
      { field: 'spec.clusterIPs[0]', message: 'Invalid value: ["None"]: may not change once set' },
      { field: 'spec.ports[0].port', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' },
      { field: 'spec.ports[0].targetPort', message: 'Invalid value: 70000: must be between 1 and 65535, inclusive' },
    ],
    want: undefined,
  },
  {
    why: 'a Deployment selector that does not match its template labels',
    status: 422,
    message:
      'Deployment.apps "mismatch" is invalid: spec.template.metadata.labels: Invalid value: {"app":"z"}: `selector` does not match template `labels`',
    causes: [
      {
        field: 'spec.template.metadata.labels',
        message: 'Invalid value: {"app":"z"}: `selector` does not match template `labels`',
      },
    ],
    want: undefined,
  },
  {
    why: 'a bound PersistentVolumeClaim request made smaller',
    status: 422,
    message:
      'PersistentVolumeClaim "bound" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
    causes: [
      { field: 'spec.resources.requests.storage', message: 'Forbidden: field can not be less than status.capacity' },
    ],
    want: undefined,
  },
  {
    why: 'Service spec.ipFamilies changed on a single-stack cluster (the new family cannot be had)',
    status: 422,
    message:
      'Service "family" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.92": expected an IPv6 value as indicated by `ipFamilies[0]`',
    causes: [
      {
        field: 'spec.clusterIPs[0]',
        message: 'Invalid value: "10.0.0.92": expected an IPv6 value as indicated by `ipFamilies[0]`',
      },
    ],
    want: undefined,
  },
  {
    why: 'Service spec.ipFamilyPolicy made RequireDualStack on a single-stack cluster',
    status: 422,
    message:
      'Service "policy" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    causes: [
      {
        field: 'spec.ipFamilyPolicy',
        message: 'Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
      },
    ],
    want: undefined,
  },
];

/**
 * Rows the test cluster cannot produce, with the wording of the validation code that does: a
 * dual-stack cluster, older API servers, admission webhooks; and texts that must not fool the
 * recogniser.
 */
const OTHER: Row[] = [
  {
    why: 'StatefulSet serviceName on 1.37 (ValidateImmutableField per field, origin "immutable")',
    status: 422,
    message: 'StatefulSet.apps "db" is invalid: spec.serviceName: Invalid value: "db-b": field is immutable',
    causes: [{ field: 'spec.serviceName', message: 'Invalid value: "db-b": field is immutable' }],
    want: ['spec.serviceName'],
  },
  ...(['set once created', 'cleared once set', 'modified once set'] as const).map((rule) => ({
    why: `declarative +k8s:update rule: field cannot be ${rule}`,
    status: 422,
    message: `Widget.example.com "w" is invalid: spec.handler: Invalid value: null: field cannot be ${rule}`,
    causes: [{ field: 'spec.handler', message: `Invalid value: null: field cannot be ${rule}` }],
    want: ['spec.handler'],
  })),
  {
    why: 'a value that quotes the declarative wording counts for nothing',
    status: 422,
    message: 'x "w" is invalid: spec.port: Invalid value: "field cannot be modified once set": must be a number',
    causes: [{ field: 'spec.port', message: 'Invalid value: "field cannot be modified once set": must be a number' }],
    want: undefined,
  },
  {
    why: 'dual-stack Service ipFamilies changed (validateUpgradeDowngradeIPFamilies)',
    status: 422,
    message: 'Service "web" is invalid: spec.ipFamilies[0]: Invalid value: ["IPv6"]: may not change once set',
    causes: [{ field: 'spec.ipFamilies[0]', message: 'Invalid value: ["IPv6"]: may not change once set' }],
    want: ['spec.ipFamilies[0]'],
  },
  {
    why: 'Service primary clusterIP released (validateUpgradeDowngradeClusterIPs)',
    status: 422,
    message: 'Service "web" is invalid: spec.clusterIPs[0]: Invalid value: []: primary clusterIP can not be unset',
    causes: [{ field: 'spec.clusterIPs[0]', message: 'Invalid value: []: primary clusterIP can not be unset' }],
    want: ['spec.clusterIPs[0]'],
  },
  {
    why: 'StorageClass parameters on an older API server',
    status: 422,
    message:
      'StorageClass.storage.k8s.io "fast" is invalid: parameters: Forbidden: updates to parameters are forbidden.',
    causes: [{ field: 'parameters', message: 'Forbidden: updates to parameters are forbidden.' }],
    want: ['parameters'],
  },
  {
    why: 'StatefulSet on an older API server (fewer mutable fields listed)',
    status: 422,
    message:
      "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', and 'updateStrategy' are forbidden",
    causes: [
      {
        field: 'spec',
        message:
          "Forbidden: updates to statefulset spec for fields other than 'replicas', 'template', and 'updateStrategy' are forbidden",
      },
    ],
    want: ['spec'],
  },
  {
    why: "an admission webhook's denial, without causes",
    status: 400,
    message: 'admission webhook "guard.example.com" denied the request: spec.bucket is immutable',
    causes: [],
    want: [],
  },
  {
    why: 'a webhook denial for another reason',
    status: 403,
    message: 'admission webhook "guard.example.com" denied the request: replicas must be odd',
    causes: [],
    want: undefined,
  },
  {
    why: 'a 409 Conflict, which Flux would recreate for',
    status: 409,
    message: 'Operation cannot be fulfilled on jobs.batch "migrate": the object has been modified',
    causes: [],
    want: undefined,
  },
  {
    why: 'a value that quotes the words, under a plain validation error',
    status: 422,
    message:
      'ConfigMap "c" is invalid: metadata.labels: Invalid value: "field is immutable: may not change once set": a valid label must be an empty string or consist of alphanumeric characters',
    causes: [
      {
        field: 'metadata.labels',
        message:
          'Invalid value: "field is immutable: may not change once set": a valid label must be an empty string or consist of alphanumeric characters',
      },
    ],
    want: undefined,
  },
  {
    why: 'a Forbidden whose diff of the object quotes the words',
    status: 422,
    message:
      'PersistentVolumeClaim "c" is invalid: spec.resources.requests.storage: Forbidden: field can not be less than status.capacity',
    causes: [
      {
        field: 'spec.resources.requests.storage',
        message: 'Forbidden: field can not be less than status.capacity\n@@ -1 +1 @@\n- "x": "field is immutable"',
      },
    ],
    want: undefined,
  },
];

describe('immutableFields', () => {
  it.each([...REAL, ...OTHER])('$why → $want', ({ status, message, causes, want }) => {
    expect(immutableFields({ status, message, details: { causes } })).toEqual(want);
  });
});

describe('detailOf', () => {
  it.each([
    ['Invalid value: ["10.0.0.176"]: may not change once set', 'may not change once set'],
    ['Invalid value: {"matchLabels":{"app":"b: c"}}: field is immutable', 'field is immutable'],
    ['Invalid value: "a\\" : b": failed rule: self == oldSelf', 'failed rule: self == oldSelf'],
    ['Invalid value: 70000: must be between 1 and 65535, inclusive', 'must be between 1 and 65535, inclusive'],
    [
      'Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"b"}}: field is immutable',
      'field is immutable',
    ],
    ['Forbidden: spec is immutable after creation\n@@ -6,7 +6,7 @@', 'spec is immutable after creation'],
    ['Required value', 'Required value'],
  ])('%j → %j', (message, want) => {
    expect(detailOf(message)).toBe(want);
  });
});

describe('changedFields (naming what changed under a cause on a whole object)', () => {
  const STS =
    "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden";
  const claim = (size: string, live = false) => ({
    ...(live ? { apiVersion: 'v1', kind: 'PersistentVolumeClaim', status: { phase: 'Pending' } } : {}),
    metadata: { name: 'data' },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      ...(live ? { volumeMode: 'Filesystem' } : {}),
    },
  });
  const sts = (size: string, replicas: number, serviceName: string, live = false) => ({
    spec: {
      replicas,
      serviceName,
      selector: { matchLabels: { app: 'db' } },
      template: { metadata: { labels: { app: 'db' } } },
      volumeClaimTemplates: [claim(size, live)],
      ...(live ? { podManagementPolicy: 'OrderedReady', revisionHistoryLimit: 10 } : {}),
    },
  });
  it.each([
    {
      why: 'a volume claim template, not the defaults the server added to the live one',
      desired: sts('2Gi', 1, 'db'),
      live: sts('1Gi', 1, 'db', true),
      want: ['spec.volumeClaimTemplates'],
    },
    {
      why: 'the serviceName, not replicas, which may change',
      desired: sts('1Gi', 3, 'other'),
      live: sts('1Gi', 1, 'db', true),
      want: ['spec.serviceName'],
    },
    {
      why: 'nothing found: the cause stays as it is',
      desired: sts('1Gi', 1, 'db'),
      live: sts('1Gi', 1, 'db', true),
      want: [],
    },
    {
      why: 'a list that got shorter',
      desired: { spec: { volumeClaimTemplates: [] } },
      live: sts('1Gi', 1, 'db', true),
      want: ['spec.volumeClaimTemplates'],
    },
  ])('$why', ({ desired, live, want }) => {
    expect(changedFields('spec', STS, desired, live)).toEqual(want);
  });

  it.each([
    {
      field: 'spec.selector',
      desired: { spec: { selector: { a: 1 } } },
      live: { spec: { selector: { a: 2 } } },
      want: [],
    },
    { field: 'spec', desired: { spec: 'x' }, live: { spec: 'y' }, want: [] },
    { field: 'spec', desired: {}, live: { spec: {} }, want: [] },
  ])('$field of $desired: only a cause on the whole spec, a map, is looked into', ({ field, desired, live, want }) => {
    expect(changedFields(field, 'spec: Forbidden: spec is immutable after creation', desired, live)).toEqual(want);
  });

  it('names what changed in a claim (every field of an unbound claim is immutable)', () => {
    expect(
      changedFields(
        'spec',
        'PersistentVolumeClaim "c" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
        claim('1Gi'),
        { ...claim('1Gi', true), spec: { ...claim('1Gi', true).spec, accessModes: ['ReadWriteMany'] } },
      ),
    ).toEqual(['spec.accessModes']);
  });
});
