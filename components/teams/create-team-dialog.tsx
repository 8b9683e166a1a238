"use client";

import { useId, useState, type FormEvent } from "react";
import { errorText } from "../../lib/orkestr/errors";
import { teamsApi } from "../../lib/queries/teams";
import { withTeam } from "../../lib/team-param";
import { Alert, AlertDescription } from "../ui/alert";
import { Button } from "../ui/button";
import { Dialog, DialogActions } from "../ui/dialog";
import { Input } from "../ui/input";
import { Label } from "../ui/label";

/**
 * "Create team": a name (the slug is made from it on the server), then this tab opens the new team
 * (a full navigation to its sandboxes: the URL's ?team= says which team). Other tabs stay where they are.
 */
export function CreateTeamDialog({ open, onOpenChange }: { open: boolean; onOpenChange: (open: boolean) => void }) {
  const [name, setName] = useState("");
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const inputId = useId();
  const errorId = useId();

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (pending) return;
    setPending(true);
    setError(null);
    try {
      const { team } = await teamsApi.create(name.trim());
      window.location.assign(withTeam("/sandboxes", team.slug));
    } catch (err) {
      setError(errorText(err));
      setPending(false);
    }
  }

  return (
    <Dialog
      open={open}
      onOpenChange={(o) => {
        onOpenChange(o);
        if (!o) setError(null);
      }}
      title="Create team"
      description="You become its owner. Its sandboxes, connections and members are its own; you can invite people once it exists."
    >
      <form onSubmit={(e) => void submit(e)} className="flex flex-col gap-4" noValidate>
        <div className="flex flex-col gap-2">
          <Label htmlFor={inputId}>Team name</Label>
          <Input
            id={inputId}
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            maxLength={100}
            required
            autoComplete="off"
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? errorId : undefined}
          />
        </div>
        {error ? (
          <Alert variant="destructive" id={errorId}>
            <AlertDescription>{error}</AlertDescription>
          </Alert>
        ) : null}
        <DialogActions cancelDisabled={pending}>
          <Button type="submit" disabled={pending || name.trim() === ""}>
            {pending ? "Creating…" : "Create team"}
          </Button>
        </DialogActions>
      </form>
    </Dialog>
  );
}
