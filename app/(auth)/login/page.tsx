import type { Metadata } from "next";
import { LoginForm } from "../../../components/auth/login-form";
import { Card, CardContent, CardDescription, CardHeader } from "../../../components/ui/card";

export const metadata: Metadata = { title: "Sign in" };

export default function LoginPage() {
  return (
    <Card>
      <CardHeader>
        <h1 className="text-xl font-semibold tracking-tight">Sign in</h1>
        <CardDescription>Sign in to your Baton console.</CardDescription>
      </CardHeader>
      <CardContent>
        <LoginForm />
      </CardContent>
    </Card>
  );
}
