"""CheckList's perturbations (a catalogue registered by name, entity and vocabulary perturbations)
and the INV and DIR cases made with them."""
