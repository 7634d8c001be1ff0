package tool

// Stamps returns a copy of what the state records, path by path, for an
// executor that carries an agent's file state between the units of work
// of its calls (a remote worker); FileStateFrom makes a state of it again.
func (f *FileState) Stamps() map[string]FileStamp {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[string]FileStamp, len(f.files))
	for k, v := range f.files {
		out[k] = v
	}
	return out
}

// FileStateFrom returns a FileState holding stamps (as Stamps returned
// them); nil gives an empty state.
func FileStateFrom(stamps map[string]FileStamp) *FileState {
	f := NewFileState()
	for k, v := range stamps {
		f.files[k] = v
	}
	return f
}
