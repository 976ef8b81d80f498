// Package version: a type of a package with an import path, which delve writes before the type's name.
package version

type Version struct {
	Major, Minor, Patch int
}

func Parse(major, minor, patch int) (*Version, error) {
	return &Version{Major: major, Minor: minor, Patch: patch}, nil
}
