import type { Metadata } from "next";
import { SetupForm } from "../../../components/auth/setup-form";
import { Card, CardContent, CardDescription, CardHeader } from "../../../components/ui/card";

export const metadata: Metadata = { title: "Set up Baton" };

export default function SetupPage() {
  return (
    <Card>
      <CardHeader>
        <h1 className="text-xl font-semibold tracking-tight">Set up Baton</h1>
        <CardDescription>Create the owner account and the first team.</CardDescription>
      </CardHeader>
      <CardContent>
        <SetupForm />
      </CardContent>
    </Card>
  );
}
