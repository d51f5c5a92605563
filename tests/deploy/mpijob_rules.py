#!/usr/bin/env python3
"""Checks Kubernetes manifests as the API server and the Kubeflow MPI operator would, offline.

Usage: mpijob_rules.py --crd CRD.yaml FILE|DIR|- ...

Every YAML document of the given files (a folder stands for its *.yaml and *.yml files, `-` for
standard input) is checked by kind:

* MPIJob (kubeflow.org/v2beta1): against the CRD's openAPIV3Schema, read from CRD.yaml and mapped
  to JSON Schema draft 7 (see `openapi_to_json_schema`), then against the operator's own rules
  (kubeflow/mpi-operator, pkg/apis/kubeflow/validation/validation.go), then against the pod rules
  the API server applies when the operator creates the pods (extended resources and huge pages).
* ConfigMap and PersistentVolumeClaim: the basic rules of the core API (names, data, quantities).
* Any other kind is reported: nothing else is expected among this project's manifests.

Where the operator or the CRD would fill in a default (slotsPerWorker, cleanPodPolicy, replicas,
sshAuthMountPath, mpiImplementation), these rules still ask for the field: a manifest checked in or
rendered by this project says what it means.

Each problem is one line, `FILE: document N: JSON-PATH: MESSAGE` (N counts the file's YAML
documents from 0). Exit status: 0 every document valid, 1 a problem was found, 2 bad usage (for
example an unreadable CRD).

The module is also imported by test_manifests.py: `ManifestValidator(crd_path)` and its
`check_text`, `check_file` and `check_document`.
"""

import argparse
import collections.abc
import decimal
import json
import pathlib
import re
import sys
from dataclasses import dataclass

import jsonschema
import yaml

MPIJOB_API_VERSION = "kubeflow.org/v2beta1"
MPIJOB_VERSION = MPIJOB_API_VERSION.split("/")[1]

# The operator's enumerations (validation.go). The releases that run MPICH jobs accept MPICH too,
# as the CRD's enum of mpiImplementation does.
REPLICA_TYPES = ("Launcher", "Worker")
RESTART_POLICIES = ("Never", "OnFailure")
CLEAN_POD_POLICIES = ("None", "Running", "All")
MPI_IMPLEMENTATIONS = ("OpenMPI", "Intel", "MPICH")
RUN_POLICY_NON_NEGATIVE = ("ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit")

# Names the operator gives the objects it creates for an MPIJob NAME (mpi_job_controller.go). An
# object of ours with one of them makes the operator stop with "already exists and is not managed
# by MPIJob".
OPERATOR_OWNED_NAMES = {"ConfigMap": "{}-config"}

ACCESS_MODES = ("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod")
VOLUME_MODES = ("Filesystem", "Block")
CONFIGMAP_MAX_BYTES = 1024 * 1024  # the API server's limit on data + binaryData

# Top-level and spec fields of the core kinds (k8s.io/api core/v1); anything else is a typo that
# `kubectl apply` (strict field validation, the default) refuses.
CONFIGMAP_FIELDS = ("apiVersion", "kind", "metadata", "data", "binaryData", "immutable")
PVC_FIELDS = ("apiVersion", "kind", "metadata", "spec")
PVC_SPEC_FIELDS = ("accessModes", "resources", "storageClassName", "volumeMode", "volumeName",
                   "selector", "dataSource", "dataSourceRef", "volumeAttributesClassName")

# k8s.io/apimachinery/pkg/util/validation.
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
CONFIGMAP_KEY = re.compile(r"[-._a-zA-Z0-9]+")

# k8s.io/apimachinery/pkg/api/resource: a decimal number and an optional binary (Ki..Ei), decimal
# (n..E) or exponent (e3) suffix.
QUANTITY = re.compile(r"([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
                      r"(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?")
QUANTITY_SUFFIXES = {
    "": 1, "n": decimal.Decimal("1e-9"), "u": decimal.Decimal("1e-6"),
    "m": decimal.Decimal("1e-3"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
    "E": 10**18, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}

INT_FORMAT_RANGES = {"int32": (-2**31, 2**31 - 1), "int64": (-2**63, 2**63 - 1)}
MESSAGE_LIMIT = 300  # characters; jsonschema quotes whole objects in some messages


@dataclass(frozen=True)
class Problem:
    """One violation: where it is (file, document index, JSON path) and what is wrong."""
    file: str
    document: int
    path: str
    message: str

    def __str__(self):
        return f"{self.file}: document {self.document}: {self.path}: {self.message}"


def json_path(parts):
    """("spec", "containers", 0, "nvidia.com/gpu") -> $.spec.containers[0]['nvidia.com/gpu']."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            text += f".{part}"
        else:
            text += f"[{part!r}]"
    return text


def is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def parse_quantity(value):
    """A Kubernetes quantity ("16Gi", "500m", 8, 1.5) as a Decimal; None when it is not one."""
    if is_int(value) or isinstance(value, float):
        return decimal.Decimal(str(value))
    if not isinstance(value, str):
        return None
    match = QUANTITY.fullmatch(value)
    if not match:
        return None
    number, suffix = match.group(1), match.group(2) or ""
    if suffix[:1] in ("e", "E"):
        return decimal.Decimal(number).scaleb(int(suffix[1:]))
    return decimal.Decimal(number) * QUANTITY_SUFFIXES[suffix]


def name_errors(value, what, pattern, max_length, rule):
    """Why `value` is not a valid `what` (a DNS label or subdomain), in Kubernetes's words."""
    if not isinstance(value, str) or not value:
        return [f"{what} required"]
    errors = []
    if len(value) > max_length:
        errors.append(f"{value!r} is not a valid {what}: must be no more than {max_length} "
                      f"characters (it has {len(value)})")
    if not pattern.fullmatch(value):
        errors.append(f"{value!r} is not a valid {what}: {rule}")
    return errors


def dns1123_label_errors(value, what="DNS-1123 label"):
    return name_errors(value, what, DNS1123_LABEL, 63,
                       "lower-case letters, digits and '-', starting and ending with a letter or "
                       "digit")


def dns1035_label_errors(value, what="DNS-1035 label"):
    return name_errors(value, what, DNS1035_LABEL, 63,
                       "lower-case letters, digits and '-', starting with a letter and ending "
                       "with a letter or digit")


def dns1123_subdomain_errors(value, what="DNS-1123 subdomain"):
    return name_errors(value, what, DNS1123_SUBDOMAIN, 253,
                       "lower-case letters, digits, '-' and '.', each dot-separated part starting "
                       "and ending with a letter or digit")


# --- The CRD's OpenAPI v3 schema as JSON Schema ----------------------------------------------

def openapi_to_json_schema(node):
    """Maps a CRD's structural OpenAPI v3 schema to JSON Schema draft 7, recursively.

    The two languages share type, properties, items, required, enum, pattern, anyOf and the
    bounds; the Kubernetes extensions are mapped to what the API server does with them:
    * an object that lists `properties` gets `additionalProperties: false` unless it carries
      `x-kubernetes-preserve-unknown-fields`, since kubectl's strict field validation (its
      default) rejects unknown fields where the server would otherwise prune them;
    * `x-kubernetes-int-or-string` keeps its anyOf integer|string (controller-gen writes one; it
      is added where missing); the quantity `pattern` beside it applies to strings only, as in
      OpenAPI;
    * `format: int32|int64` becomes minimum/maximum (JSON Schema does not check formats);
    * `x-kubernetes-list-type: set` becomes `uniqueItems`; `map` lists keep their
      `x-kubernetes-list-map-keys`, a keyword ManifestValidator implements (unique keys).
    Descriptions and defaults stay (JSON Schema ignores them).
    """
    if not isinstance(node, dict):
        return node
    schema = dict(node)
    for keyword in ("properties", "patternProperties"):
        if keyword in schema:
            schema[keyword] = {name: openapi_to_json_schema(sub)
                               for name, sub in schema[keyword].items()}
    for keyword in ("items", "additionalProperties", "not"):
        if isinstance(schema.get(keyword), dict):
            schema[keyword] = openapi_to_json_schema(schema[keyword])
    for keyword in ("allOf", "anyOf", "oneOf"):
        if keyword in schema:
            schema[keyword] = [openapi_to_json_schema(sub) for sub in schema[keyword]]

    if ("properties" in schema and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")):
        schema["additionalProperties"] = False
    if schema.get("x-kubernetes-int-or-string") and "anyOf" not in schema and "type" not in schema:
        schema["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if schema.get("type") == "integer" and schema.get("format") in INT_FORMAT_RANGES:
        low, high = INT_FORMAT_RANGES[schema["format"]]
        schema.setdefault("minimum", low)
        schema.setdefault("maximum", high)
    if schema.get("x-kubernetes-list-type") == "set":
        schema["uniqueItems"] = True
    return schema


def _unique_list_map_keys(validator, keys, instance, schema):
    """The `x-kubernetes-list-map-keys` keyword: no two items of a map list share their keys.

    A missing key counts as its default (a container port's protocol is TCP), as the server
    defaults before it compares.
    """
    if not validator.is_type(instance, "array"):
        return
    item_properties = schema.get("items", {}).get("properties", {})
    defaults = {key: item_properties.get(key, {}).get("default") for key in keys}
    seen = {}
    for index, item in enumerate(instance):
        if not isinstance(item, dict):
            continue
        key_values = {key: item.get(key, defaults[key]) for key in keys}
        identity = json.dumps(key_values, sort_keys=True, default=str)
        if identity in seen:
            yield jsonschema.ValidationError(
                f"duplicate entry {key_values} (the same as item {seen[identity]})", path=[index])
        else:
            seen[identity] = index


KubernetesValidator = jsonschema.validators.extend(
    jsonschema.Draft7Validator, {"x-kubernetes-list-map-keys": _unique_list_map_keys})


def load_mpijob_schema(crd_path):
    """The v2beta1 openAPIV3Schema of the MPIJob CRD in `crd_path`, as JSON Schema draft 7.

    The file may hold other documents (the operator's whole deployment manifest). Raises
    ValueError when no MPIJob CRD with a v2beta1 schema is in it.
    """
    with open(crd_path) as stream:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's where PyYAML has it
        documents = list(yaml.load_all(stream, Loader=loader))
    for document in documents:
        if not isinstance(document, dict) or document.get("kind") != "CustomResourceDefinition":
            continue
        spec = document.get("spec") or {}
        if (spec.get("names") or {}).get("kind") != "MPIJob":
            continue
        for version in spec.get("versions") or []:
            if version.get("name") == MPIJOB_VERSION:
                return openapi_to_json_schema(version["schema"]["openAPIV3Schema"])
    raise ValueError(f"{crd_path}: no MPIJob CustomResourceDefinition with a {MPIJOB_VERSION} "
                     "schema")


def prune_nulls(value):
    """The document without null mapping values: the API server drops them from custom resources
    (fields are not nullable) before it validates, so `resources:` alone means no resources."""
    if isinstance(value, dict):
        return {key: prune_nulls(sub) for key, sub in value.items() if sub is not None}
    if isinstance(value, list):
        return [prune_nulls(item) for item in value]
    return value


def schema_findings(validator, document):
    """(path parts, message) for each violation of the JSON Schema, in a readable wording."""
    findings = []
    for error in validator.iter_errors(document):
        path = tuple(error.absolute_path)
        schema = error.schema if isinstance(error.schema, dict) else {}
        if error.validator == "additionalProperties" and error.validator_value is False:
            for field in sorted(set(error.instance) - set(schema.get("properties", {}))):
                findings.append((path + (field,), "unknown field (not in the CRD's schema)"))
        elif error.validator == "anyOf" and schema.get("x-kubernetes-int-or-string"):
            findings.append((path, f"must be an integer or a string, not {error.instance!r}"))
        elif error.validator == "pattern" and schema.get("x-kubernetes-int-or-string"):
            findings.append((path, f"{error.instance!r} is not a Kubernetes quantity "
                                   "(such as 8, \"500m\", \"16Gi\")"))
        else:
            findings.append((path, error.message))
    return findings


# --- Rules beyond the schema ------------------------------------------------------------------

def mapping(value):
    """`value` if it is a mapping, else an empty one (type errors are reported elsewhere)."""
    return value if isinstance(value, dict) else {}


def metadata_findings(document, name_check):
    """metadata: a name that passes `name_check`, a namespace that is a DNS-1123 label, labels
    and annotations that map strings to strings."""
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return [(("metadata",), "required: a mapping with at least `name`")]
    findings = [(("metadata", "name"), error) for error in name_check(metadata.get("name"))]
    if "namespace" in metadata:
        findings += [(("metadata", "namespace"), error)
                     for error in dns1123_label_errors(metadata["namespace"])]
    for field in ("labels", "annotations"):
        entries = metadata.get(field)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            findings.append((("metadata", field), "must be a mapping of strings to strings"))
            continue
        for key, value in entries.items():
            if not isinstance(value, str):
                findings.append((("metadata", field, str(key)),
                                 f"must be a string (quote it), not {value!r}"))
            elif field == "labels" and (len(value) > 63 or not LABEL_VALUE.fullmatch(value)):
                findings.append((("metadata", field, str(key)),
                                 f"{value!r} is not a valid label value (at most 63 letters, "
                                 "digits, '-', '_' or '.', starting and ending with a letter or "
                                 "digit)"))
    return findings


def unknown_field_findings(document, known, prefix=()):
    return [(prefix + (field,), "unknown field") for field in document if field not in known]


def api_version_findings(document, expected):
    if document.get("apiVersion") != expected:
        return [(("apiVersion",), f"must be {expected!r}, not {document.get('apiVersion')!r}")]
    return []


def replica_spec_findings(spec, path, replica_type):
    """validateReplicaSpec, validateLauncherReplicaSpec and validateWorkerReplicaSpec."""
    findings = []
    replicas = spec.get("replicas")
    if "replicas" not in spec:
        findings.append((path + ("replicas",), "required: must define the number of replicas"))
    elif is_int(replicas) and replica_type == "Launcher" and replicas != 1:
        findings.append((path + ("replicas",), f"must be 1, not {replicas}"))
    elif is_int(replicas) and replica_type == "Worker" and replicas < 1:
        findings.append((path + ("replicas",),
                         f"must be greater than or equal to 1, not {replicas}"))
    if spec.get("restartPolicy") not in RESTART_POLICIES:
        findings.append((path + ("restartPolicy",),
                         f"must be one of {', '.join(RESTART_POLICIES)}, not "
                         f"{spec.get('restartPolicy')!r}"))
    containers = mapping(mapping(spec.get("template")).get("spec")).get("containers")
    if containers is None or containers == []:
        findings.append((path + ("template", "spec", "containers"),
                         "required: must define at least one container"))
    return findings


def container_resource_findings(container, path):
    """The API server's rules for a container's resources that the CRD schema cannot express.

    Extended resources (a name with a domain outside kubernetes.io, such as nvidia.com/gpu or
    vpc.amazonaws.com/efa) and huge pages cannot be overcommitted: a request needs a limit, and
    the two must be equal. Extended resources come in whole units. Huge pages need a cpu or
    memory request or limit beside them.
    """
    resources = mapping(container.get("resources"))
    requests, limits = mapping(resources.get("requests")), mapping(resources.get("limits"))
    findings = []
    for name in sorted(set(requests) | set(limits)):
        extended = "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")
        if not (extended or name.startswith("hugepages-")):
            continue
        request, limit = parse_quantity(requests.get(name)), parse_quantity(limits.get(name))
        if name in requests and name not in limits:
            findings.append((path + ("resources", "limits", name),
                             f"required: a request of {name} needs a limit equal to it"))
        elif request is not None and limit is not None and request != limit:
            findings.append((path + ("resources", "requests", name),
                             f"must equal limits[{name!r}] ({requests[name]!r} != "
                             f"{limits[name]!r}): {name} cannot be overcommitted"))
        for kind, quantity in (("requests", request), ("limits", limit)):
            if extended and quantity is not None and quantity != quantity.to_integral_value():
                findings.append((path + ("resources", kind, name),
                                 f"must be a whole number of {name}"))
    if any(name.startswith("hugepages-") for name in set(requests) | set(limits)):
        if not {"cpu", "memory"} & (set(requests) | set(limits)):
            findings.append((path + ("resources",), "huge pages require a cpu or memory request"))
    return findings


def replica_specs_findings(replica_specs):
    """validateMPIReplicaSpecs: Launcher (required) and Worker, each a valid replica spec whose
    containers' resources the API server will accept; no other replica type."""
    path = ("spec", "mpiReplicaSpecs")
    if not isinstance(replica_specs, dict):
        return [(path, "required: must have replica specs")]
    findings = [(path + (str(key),), f"unknown replica type (only {' and '.join(REPLICA_TYPES)})")
                for key in replica_specs if key not in REPLICA_TYPES]
    if "Launcher" not in replica_specs:
        findings.append((path + ("Launcher",), "required: must have Launcher replica spec"))
    for replica_type in REPLICA_TYPES:
        replica_spec = replica_specs.get(replica_type)
        if not isinstance(replica_spec, dict):
            continue
        findings += replica_spec_findings(replica_spec, path + (replica_type,), replica_type)
        pod_spec = mapping(mapping(replica_spec.get("template")).get("spec"))
        for field in ("initContainers", "containers"):
            containers = pod_spec.get(field)
            for index, container in enumerate(containers if isinstance(containers, list) else []):
                findings += container_resource_findings(
                    mapping(container), path + (replica_type, "template", "spec", field, index))
    return findings


def job_spec_field_findings(spec):
    """validateMPIJobSpec and validateRunPolicy, beyond the replica specs."""
    findings = []
    slots = spec.get("slotsPerWorker")
    if "slotsPerWorker" not in spec:
        findings.append((("spec", "slotsPerWorker"),
                         "required: must have number of slots per worker"))
    elif is_int(slots) and slots < 0:
        findings.append((("spec", "slotsPerWorker"),
                         f"must be greater than or equal to 0, not {slots}"))

    run_policy = mapping(spec.get("runPolicy"))
    if "cleanPodPolicy" not in run_policy:
        findings.append((("spec", "runPolicy", "cleanPodPolicy"),
                         "required: must have clean Pod policy"))
    elif run_policy["cleanPodPolicy"] not in CLEAN_POD_POLICIES:
        findings.append((("spec", "runPolicy", "cleanPodPolicy"),
                         f"must be one of {', '.join(CLEAN_POD_POLICIES)}, not "
                         f"{run_policy['cleanPodPolicy']!r}"))
    for field in RUN_POLICY_NON_NEGATIVE:
        if is_int(run_policy.get(field)) and run_policy[field] < 0:
            findings.append((("spec", "runPolicy", field),
                             f"must be greater than or equal to 0, not {run_policy[field]}"))

    if not spec.get("sshAuthMountPath"):
        findings.append((("spec", "sshAuthMountPath"),
                         "required: must have a mount path for SSH credentials"))
    if spec.get("mpiImplementation") not in MPI_IMPLEMENTATIONS:
        findings.append((("spec", "mpiImplementation"),
                         f"must be one of {', '.join(MPI_IMPLEMENTATIONS)}, not "
                         f"{spec.get('mpiImplementation')!r}"))
    return findings


def worker_hostname_findings(job):
    """validateMPIJobName: the last worker's pod name, NAME-worker-(replicas-1), is also its
    hostname and must be a DNS-1123 label."""
    name = mapping(job.get("metadata")).get("name")
    if not isinstance(name, str) or not name:
        return []  # reported by metadata_findings
    replica_specs = mapping(mapping(job.get("spec")).get("mpiReplicaSpecs"))
    workers = mapping(replica_specs.get("Worker")).get("replicas")
    last = workers - 1 if is_int(workers) and workers > 0 else 0
    return [(("metadata", "name"), f"the worker pod hostname: {error}")
            for error in dns1123_label_errors(f"{name}-worker-{last}")]


def mpijob_findings(job):
    """The MPI operator's ValidateMPIJob, plus the pod rules its pods must pass."""
    spec = mapping(job.get("spec"))
    return (api_version_findings(job, MPIJOB_API_VERSION)
            + metadata_findings(job, dns1035_label_errors)
            + worker_hostname_findings(job)
            + replica_specs_findings(spec.get("mpiReplicaSpecs"))
            + job_spec_field_findings(spec))


def configmap_findings(config_map):
    findings = api_version_findings(config_map, "v1")
    findings += metadata_findings(config_map, dns1123_subdomain_errors)
    findings += unknown_field_findings(config_map, CONFIGMAP_FIELDS)
    size = 0
    for field in ("data", "binaryData"):
        entries = config_map.get(field)
        if entries is None:
            continue
        if not isinstance(entries, dict):
            findings.append(((field,), "must be a mapping of keys to strings"))
            continue
        for key, value in entries.items():
            if not isinstance(key, str) or len(key) > 253 or not CONFIGMAP_KEY.fullmatch(key) \
                    or key in (".", ".."):
                findings.append(((field, str(key)), "is not a valid key (letters, digits, '-', '_' "
                                                    "or '.', at most 253 characters)"))
            if not isinstance(value, str):
                findings.append(((field, str(key)), f"must be a string (quote it), not {value!r}"))
            else:
                size += len(str(key).encode()) + len(value.encode())
    overlap = set(mapping(config_map.get("data"))) & set(mapping(config_map.get("binaryData")))
    findings += [(("binaryData", str(key)), "duplicates a key of data")
                 for key in sorted(overlap, key=str)]
    if size > CONFIGMAP_MAX_BYTES:
        findings.append((("data",),
                         f"{size} bytes; a ConfigMap holds at most {CONFIGMAP_MAX_BYTES}"))
    return findings


def pvc_findings(claim):
    findings = api_version_findings(claim, "v1")
    findings += metadata_findings(claim, dns1123_subdomain_errors)
    findings += unknown_field_findings(claim, PVC_FIELDS)
    spec = claim.get("spec")
    if not isinstance(spec, dict):
        return findings + [(("spec",), "required: a mapping")]
    findings += unknown_field_findings(spec, PVC_SPEC_FIELDS, ("spec",))

    modes = spec.get("accessModes")
    if not isinstance(modes, list) or not modes:
        findings.append((("spec", "accessModes"), f"required: a list of {', '.join(ACCESS_MODES)}"))
    else:
        findings += [(("spec", "accessModes", index), f"must be one of {', '.join(ACCESS_MODES)}, "
                                                      f"not {mode!r}")
                     for index, mode in enumerate(modes) if mode not in ACCESS_MODES]
    storage = mapping(mapping(spec.get("resources")).get("requests")).get("storage")
    quantity = parse_quantity(storage)
    if storage is None:
        findings.append((("spec", "resources", "requests", "storage"),
                         "required: the size to claim"))
    elif quantity is None or quantity <= 0:
        findings.append((("spec", "resources", "requests", "storage"),
                         f"must be a positive quantity (such as \"100Gi\"), not {storage!r}"))
    if "storageClassName" not in spec:
        findings.append((("spec", "storageClassName"),
                         "required: name the class (for example fsx-sc or efs-sc), or \"\" to bind "
                         "a PersistentVolume made by hand; without it the cluster's default class "
                         "(often a ReadWriteOnce block volume) provisions the claim"))
    elif spec["storageClassName"] != "":
        findings += [(("spec", "storageClassName"), error)
                     for error in dns1123_subdomain_errors(spec["storageClassName"])]
    if "volumeMode" in spec and spec["volumeMode"] not in VOLUME_MODES:
        findings.append((("spec", "volumeMode"), f"must be one of {', '.join(VOLUME_MODES)}, not "
                                                 f"{spec['volumeMode']!r}"))
    return findings


# --- Files and documents ----------------------------------------------------------------------

class StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader that refuses duplicate keys in a mapping, as kubectl does (PyYAML
    alone keeps the last value silently)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, collections.abc.Hashable):
                continue  # the base class reports unhashable keys
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark,
                    f"found duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class ManifestValidator:
    """Checks manifests against the MPIJob CRD in `crd_path` and the rules above.

    Construction reads and maps the CRD (raises OSError, yaml.YAMLError or ValueError); the
    checks after that are pure and thread-compatible.
    """

    def __init__(self, crd_path):
        self._mpijob_validator = KubernetesValidator(load_mpijob_schema(crd_path))

    def check_document(self, document, file="<document>", index=0):
        """The Problems of one parsed YAML document (a mapping): for an MPIJob the schema's
        first, then the operator's and the pod rules'."""
        if not isinstance(document, dict):
            return [Problem(file, index, "$", "a manifest must be a mapping")]
        kind = document.get("kind")
        if kind == "MPIJob":
            pruned = prune_nulls(document)
            findings = schema_findings(self._mpijob_validator, pruned) + mpijob_findings(pruned)
        elif kind == "ConfigMap":
            findings = configmap_findings(document)
        elif kind == "PersistentVolumeClaim":
            findings = pvc_findings(document)
        elif not kind:
            findings = [(("kind",), "required")]
        else:
            findings = [(("kind",), f"{kind!r} is not a kind these rules check (MPIJob, ConfigMap, "
                                    "PersistentVolumeClaim)")]
        return [Problem(file, index, json_path(path), shorten(message))
                for path, message in findings]

    def check_text(self, text, file="<text>"):
        """The Problems of every document in a multi-document YAML text, plus the conflicts
        between its documents (the same object twice, a name the operator reserves)."""
        problems, documents = [], []
        try:
            for document in yaml.load_all(text, Loader=StrictLoader):
                documents.append(document)
        except yaml.YAMLError as error:
            problems.append(Problem(file, len(documents), "$", yaml_error_message(error)))
        for index, document in enumerate(documents):
            if document is not None:  # an empty document, as after a trailing `---`
                problems += self.check_document(document, file, index)
        problems += conflict_problems(documents, file)
        return sorted(problems, key=lambda problem: problem.document)

    def check_file(self, path):
        try:
            text = sys.stdin.read() if str(path) == "-" else pathlib.Path(path).read_text()
        except (OSError, UnicodeDecodeError) as error:
            return [Problem(str(path), 0, "$", f"cannot read: {error}")]
        return self.check_text(text, "<stdin>" if str(path) == "-" else str(path))


def conflict_problems(documents, file):
    """Two documents of a file naming the same object, or an object under a name the operator
    gives its own objects for an MPIJob of the same file."""
    problems, first_index = [], {}
    for index, document in enumerate(documents):
        if not isinstance(document, dict):
            continue
        metadata = mapping(document.get("metadata"))
        identity = (document.get("kind"), metadata.get("namespace"), metadata.get("name"))
        if identity in first_index:
            problems.append(Problem(file, index, "$.metadata.name",
                                    f"{identity[0]} {identity[2]!r} is also document "
                                    f"{first_index[identity]}"))
        else:
            first_index[identity] = index
    jobs = [(namespace, name) for kind, namespace, name in first_index if kind == "MPIJob"]
    for (kind, namespace, name), index in first_index.items():
        for job_namespace, job_name in jobs:
            if (kind in OPERATOR_OWNED_NAMES and namespace == job_namespace
                    and name == OPERATOR_OWNED_NAMES[kind].format(job_name)):
                problems.append(Problem(
                    file, index, "$.metadata.name",
                    f"{name!r} is the name the MPI operator gives the {kind} it creates for "
                    f"MPIJob {job_name!r}; the operator would stop with 'already exists and is "
                    "not managed by MPIJob'"))
    return problems


def yaml_error_message(error):
    """A YAML parser error on one line: where (line and column in the file) and what."""
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"not valid YAML{where}: {getattr(error, 'problem', None) or error}"


def shorten(message):
    """The message on one line, cut to MESSAGE_LIMIT characters."""
    message = " ".join(message.split())
    return message if len(message) <= MESSAGE_LIMIT else message[:MESSAGE_LIMIT - 3] + "..."


def expand_paths(arguments):
    """Files as given; a folder stands for the *.yaml and *.yml files under it, sorted."""
    paths = []
    for argument in arguments:
        path = pathlib.Path(argument)
        if argument != "-" and path.is_dir():
            paths += sorted(found for found in path.rglob("*")
                            if found.suffix in (".yaml", ".yml") and found.is_file())
        else:
            paths.append(argument)
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Check Kubernetes manifests (MPIJob v2beta1, ConfigMap, PersistentVolumeClaim) "
                    "as the API server and the Kubeflow MPI operator would.")
    parser.add_argument("--crd", required=True, help="the MPIJob CustomResourceDefinition (YAML)")
    parser.add_argument("files", nargs="+", help="manifest files or folders; - for standard input")
    args = parser.parse_args(argv)
    try:
        validator = ManifestValidator(args.crd)
    except (OSError, yaml.YAMLError, ValueError, KeyError) as error:
        print(f"mpijob_rules.py: cannot use the CRD: {error}", file=sys.stderr)
        return 2
    paths = expand_paths(args.files)
    if not paths:
        print("mpijob_rules.py: no manifest files given", file=sys.stderr)
        return 2
    problems = [problem for path in paths for problem in validator.check_file(path)]
    for problem in problems:
        print(problem)
    if not problems:
        print(f"ok: {len(paths)} file(s) valid")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
