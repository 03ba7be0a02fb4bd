package packer

import "maps"

// CloudEnvironmentVar is the variable image-builder's azure-arm template
// passes to the builder's cloud_environment_name (its default "public").
const CloudEnvironmentVar = "cloud_environment_name"

// withCloudEnvironment gives a template that declares
// cloud_environment_name the Runner's CloudEnvironment when neither the
// request's vars nor its var-files set it, so the build reaches the cloud
// imgflow does (--cloud). Templates that spell the cloud otherwise, or
// not at all (AgentBaker's: the public cloud), are left as they are.
func (r *Runner) withCloudEnvironment(req BuildRequest) BuildRequest {
	if r.CloudEnvironment == "" {
		return req
	}
	if _, set := req.Vars[CloudEnvironmentVar]; set {
		return req
	}
	tpl, err := LoadTemplate(ResolvePath(req.WorkDir, req.TemplatePath))
	if err != nil {
		return req // prepare reports it
	}
	declared := false
	for _, v := range tpl.Declared() {
		declared = declared || v.Name == CloudEnvironmentVar
	}
	if !declared {
		return req
	}
	for _, f := range req.VarFiles {
		if vf, err := tpl.ReadVarFile(ResolvePath(req.WorkDir, f)); err != nil {
			return req
		} else if _, set := vf[CloudEnvironmentVar]; set {
			return req
		}
	}
	req.Vars = maps.Clone(req.Vars)
	if req.Vars == nil {
		req.Vars = map[string]string{}
	}
	req.Vars[CloudEnvironmentVar] = r.CloudEnvironment
	return req
}
